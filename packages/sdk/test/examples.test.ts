import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyRepository, type RepoCopy } from '../../server/test/support/repo-copy.js';
import { BandClient } from '../src/index.js';
import { PASSWORD, registeredClient, startTestServer, type TestServer } from './support.js';

// The examples run as an application outside the workspace would: in a copy of the repository, `pnpm pack`
// makes the SDK's tarball, and `npm install` in `examples/` installs that tarball with its dependencies from
// the registry, as the examples' README says. The copy takes the SDK as `pnpm test`'s build made it, and packs
// it without its `prepack`, the same `tsup` run again (11 s of CPU).
const run = promisify(execFile);

let copy: RepoCopy;
let examples: string;
let server: TestServer;
let dir: string;
let env: Record<string, string>;

beforeAll(async () => {
  copy = await copyRepository({ builtPackages: ['sdk'] });
  await copy.run('pnpm', ['--config.ignore-scripts=true', 'pack'], { cwd: 'packages/sdk' });
  await copy.run('npm', ['install', '--no-audit', '--no-fund'], { cwd: 'examples' });
  examples = path.join(copy.root, 'examples');
  server = await startTestServer();
  dir = await mkdtemp(path.join(os.tmpdir(), 'sdk-examples-'));
  const { email } = await registeredClient(server.url);
  env = { ...process.env, BAND_API_URL: server.url, BAND_EMAIL: email, BAND_PASSWORD: PASSWORD, BAND_TOKEN_FILE: path.join(dir, 'tokens.json') } as Record<string, string>;
}, 300_000);
afterAll(async () => {
  await server?.close();
  await copy?.remove();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('examples', () => {
  it('the packed SDK declares what its contract subpath needs (zod)', async () => {
    const script = "const contract = await import('@bandcollab/sdk/contract'); console.log(typeof contract.registerRequest?.parse)";
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { cwd: examples });
    expect(stdout.trim()).toBe('function');
  });

  it('publish-mix.mjs creates what is missing, uploads, and prints a working share link', async () => {
    const mix = path.join(dir, 'final mix.mp3');
    const bytes = Buffer.concat([Buffer.from('ID3'), Buffer.alloc(100_000, 1)]);
    await writeFile(mix, bytes);
    const githubOutput = path.join(dir, 'github-output');
    const args = [path.join(examples, 'publish-mix.mjs'), mix, '--project', 'Album', '--vibe', 'Singles', '--expires-in', '3600'];
    const first = await run(process.execPath, args, { env: { ...env, GITHUB_OUTPUT: githubOutput } });
    const shareUrl = first.stdout.trim().split('\n').at(-1)!;
    expect(shareUrl).toMatch(/\/share\/[\w-]+$/);
    expect(await readFile(githubOutput, 'utf8')).toBe(`share_url=${shareUrl}\n`);
    const token = shareUrl.split('/').at(-1)!;
    expect(await new BandClient({ baseUrl: server.url }).shares.get(token)).toMatchObject({ size: bytes.length, type: 'CUT' });

    await run(process.execPath, args, { env });
    const owner = new BandClient({ baseUrl: server.url });
    await owner.auth.login({ email: env.BAND_EMAIL!, password: PASSWORD });
    const [project, ...others] = await owner.projects.list();
    expect(others).toEqual([]);
    const detail = await owner.projects.get(project!.id);
    expect(detail.vibes.map((v) => [v.name, v.cuts.map((c) => [c.name, c.files.length])])).toEqual([['Singles', [['final mix', 2]]]]);
  });

  it('publish-mix.mjs publishes with only a personal access token in BAND_TOKEN', async () => {
    const owner = new BandClient({ baseUrl: server.url });
    await owner.auth.login({ email: env.BAND_EMAIL!, password: PASSWORD });
    const { token } = await owner.tokens.create({ name: 'CI', scope: 'write', expiresIn: 3600 });
    const mix = path.join(dir, 'token mix.mp3');
    await writeFile(mix, Buffer.concat([Buffer.from('ID3'), Buffer.alloc(1000, 2)]));
    const tokenOnly = { PATH: env.PATH, BAND_API_URL: env.BAND_API_URL, BAND_TOKEN: token };
    const published = await run(process.execPath, [path.join(examples, 'publish-mix.mjs'), mix, '--project', 'Album', '--vibe', 'Singles'], { env: tokenOnly });
    expect(published.stdout.trim().split('\n').at(-1)).toMatch(/\/share\/[\w-]+$/);
  });

  it('app.mjs signs in, keeps its tokens in a file and prints the projects', async () => {
    const first = await run(process.execPath, [path.join(examples, 'app.mjs')], { env });
    expect(first.stdout).toContain('Album (ADMIN, 1 member)');
    expect(first.stdout).toMatch(/- final mix: .*\[CUT, 97\.\d KiB\]/);
    const saved = JSON.parse(await readFile(env.BAND_TOKEN_FILE!, 'utf8'));
    expect(saved.refreshToken).toEqual(expect.any(String));

    const again = await run(process.execPath, [path.join(examples, 'app.mjs')], { env: { ...env, BAND_PASSWORD: '' } });
    expect(again.stdout).toContain('Album');
  });

  it('publish-mix.mjs fails with a clear message and exit code 1', async () => {
    const error = await run(process.execPath, [path.join(examples, 'publish-mix.mjs'), path.join(dir, 'notes.txt'), '--project', 'X'], { env }).catch((e) => e);
    expect(error.code).toBe(1);
    expect(error.stderr).toMatch(/publish failed/);
  });
});
