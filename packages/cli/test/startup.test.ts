import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BAND } from './support/cli.js';

const RECORD_MODULES = fileURLToPath(new URL('./fixtures/record-modules.mjs', import.meta.url));

let work: string;
beforeAll(async () => {
  work = await mkdtemp(path.join(os.tmpdir(), 'band-startup-'));
});
afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

/** Runs band and answers which of the big libraries the files it loaded contain. */
async function librariesLoaded(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ sdk: boolean; undici: boolean; nodeUndici: boolean; conf: boolean; formData: boolean }> {
  const log = path.join(work, `${args.join('-')}.log`);
  await new Promise<void>((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', RECORD_MODULES, BAND, ...args], {
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: work, MODULE_LOG: log, ...env },
      stdio: 'ignore',
    });
    child.on('error', reject);
    child.on('close', () => resolve());
  });
  const loaded = (await readFile(log, 'utf8')).split('\n');
  const files = loaded.filter((url) => url.startsWith('file:'));
  const code = (await Promise.all(files.map((url) => readFile(fileURLToPath(url), 'utf8')))).join('\n');
  // The bundle keeps each bundled file's path as a comment.
  return {
    sdk: /^\/\/ \.\.\/sdk\/dist\/index\.js$/m.test(code),
    undici: /node_modules\/undici\/lib\//.test(code),
    // Node's fetch (and an ES module's `import` of node:http, whose namespace reads its WebSocket export).
    nodeUndici: loaded.includes('node:internal/deps/undici/undici'),
    conf: /node_modules\/conf\/dist\//.test(code),
    formData: /node_modules\/form-data\/lib\//.test(code),
  };
}

describe('start-up', () => {
  it.each([['auth', 'login'], ['project', 'list'], ['member', 'list'], ['vibe', 'create'], ['cut', 'create'], ['file', 'upload'], ['comment', 'add'], ['review', 'status'], ['storage'], ['publish'], ['watch'], ['completion']])(
    '`band %s … --help` loads neither the SDK, undici, conf nor form-data: a command loads them when it runs',
    async (...command: string[]) => {
      expect(await librariesLoaded([...command, '--help'])).toEqual({ sdk: false, undici: false, nodeUndici: false, conf: false, formData: false });
    },
  );

  it('a command that runs loads the SDK (so the check above can see it), conf only to save settings, undici and form-data only to upload, and never Node\'s fetch for a small request', async () => {
    // Port 9 is refused at once: the request fails fast, after the sender is loaded.
    const env = { BAND_TOKEN: 'unused', BAND_API_URL: 'http://127.0.0.1:9' };
    expect(await librariesLoaded(['project', 'list'], env)).toEqual({ sdk: true, undici: false, nodeUndici: false, conf: false, formData: false });
    expect(await librariesLoaded(['auth', 'logout'], env)).toEqual({ sdk: true, undici: false, nodeUndici: false, conf: true, formData: false });
  });
});

describe('compile cache', () => {
  const runBand = (env: Record<string, string>) =>
    new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
      const child = spawn(process.execPath, [BAND, '--version'], { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: work, ...env } });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk));
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code, stdout, stderr }));
    });

  it('keeps V8 code of band\'s modules under $XDG_CACHE_HOME/band, so the next start does not compile them again', async () => {
    const cache = path.join(work, 'xdg-cache');
    expect(await runBand({ XDG_CACHE_HOME: cache })).toMatchObject({ code: 0, stderr: '' });
    const entries = await readdir(path.join(cache, 'band', 'compile'), { recursive: true });
    expect(entries.length).toBeGreaterThan(1);
  });

  it('runs as before when the cache directory cannot be made', async () => {
    const file = path.join(work, 'not-a-directory');
    await writeFile(file, '');
    expect(await runBand({ XDG_CACHE_HOME: file })).toMatchObject({ code: 0, stderr: '', stdout: expect.stringMatching(/^\d+\.\d+\.\d+\n$/) });
  });
});
