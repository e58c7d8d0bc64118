import { spawn } from 'node:child_process';
import { mkdtemp, rm, stat, utimes } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { copyRepository, type RepoCopy } from './support/repo-copy.js';
import { createTestDatabase } from './support/server.js';

// `pnpm start` in a copy of the repository with nothing built, so its builds never touch the dist/ that
// other tests run.
let copy: RepoCopy;
beforeAll(async () => {
  copy = await copyRepository();
}, 120_000);
afterAll(() => copy?.remove());

const serverBuild = () => path.join(copy.root, 'packages/server/dist/main.js');
const buildIfChanged = () => copy.run(process.execPath, ['scripts/build-if-changed.mjs']);

// Two builds in all (JavaScript only, a second or two each): `pnpm start` builds the copy first, and the
// second test finds it built.
describe('pnpm start', () => {
  it('builds what is not built (one line on stderr), writes only the server’s lines to stdout, and stops with exit 0 on SIGTERM', async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'bandcollab-start-'));
    onTestFinished(() => rm(dataDir, { recursive: true, force: true }));
    const child = spawn('pnpm', ['start'], {
      cwd: copy.root,
      env: { ...process.env, PORT: '0', LOG_LEVEL: 'info', DATABASE_URL: await createTestDatabase(), DATA_DIR: dataDir, SCRYPT_LOG_N: '4', MIN_FREE_DISK_MB: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', () => stdout.includes('listening on ') && resolve());
      void exited.then((code) => reject(new Error(`pnpm start exited with ${code}:\n${stdout}${stderr}`)));
    });
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(stderr).toBe('building the server (sources changed)…\n');
    // pnpm announces the script it runs ("> bandcollab@ start …"); every other line is the server's.
    const lines = stdout.split('\n').filter((line) => line !== '' && !line.startsWith('> '));
    for (const line of lines) expect(line, stdout).toMatch(/^(\{.*\}|listening on http:\/\/\S+ \(band: band auth login.*\)|SIGTERM received, .*)$/);
    expect(stdout).not.toMatch(/tsup|Build success|ESM/);
  }, 180_000);

  it('builds again only when a source is newer than the build, and says so in one line on stderr', async () => {
    // Built by the test above; when this one runs alone, here.
    await buildIfChanged();
    const built = (await stat(serverBuild())).mtimeMs;

    expect(await buildIfChanged()).toEqual({ stdout: '', stderr: '' });
    expect((await stat(serverBuild())).mtimeMs).toBe(built);

    const source = path.join(copy.root, 'packages/sdk/src/contract/fields.ts');
    const later = new Date(Date.now() + 5000);
    await utimes(source, later, later);
    expect(await buildIfChanged()).toEqual({ stdout: '', stderr: 'building the server (sources changed)…\n' });
    expect((await stat(serverBuild())).mtimeMs).toBeGreaterThan(built);
  }, 180_000);
});
