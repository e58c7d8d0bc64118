// What an admin tripped over in the first hour with band (the first-hour issue, point 7): each one, as they ran into it.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm, truncate, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestServer, type TestServer } from '../../server/test/support/server.js';
import { BAND, type CliUser, cliUser, registerWithCli, type RunResult, wavBytes } from './support/cli.js';

vi.setConfig({ testTimeout: 60_000 });

let server: TestServer;
let admin: CliUser;
let work: string;

async function ok(user: CliUser, args: string[], cwd = work): Promise<RunResult> {
  const result = await user.band(args, { cwd });
  if (result.exitCode !== 0) throw new Error(`band ${args.join(' ')} exited ${result.exitCode}: ${result.stderr}`);
  return result;
}

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

beforeAll(async () => {
  server = await startTestServer();
  admin = await cliUser(server.url);
  await registerWithCli(admin, 'ada@example.com', 'correct horse battery', 'Ada');
  work = await mkdtemp(path.join(os.tmpdir(), 'band-first-hour-'));
  await ok(admin, ['project', 'create', 'Demo']);
  await ok(admin, ['vibe', 'create', 'Verse', '--project', 'Demo']);
  await ok(admin, ['cut', 'create', 'Take 1', '--vibe', 'Verse', '--project', 'Demo']);
});
afterAll(async () => {
  await admin?.cleanup();
  if (work) await rm(work, { recursive: true, force: true });
  await server?.close();
});

const cutFlags = ['--cut', 'Take 1', '--vibe', 'Verse', '--project', 'Demo'];

describe('the server address', () => {
  it('a server that does not answer is "cannot reach", exit 5, with credentials for it or not', async () => {
    const dead = `http://127.0.0.1:${await closedPort()}`;
    for (const env of [{}, { BAND_TOKEN: 'bcp_anything' }]) {
      const result = await admin.band(['project', 'list', '--api-url', dead], { env });
      expect(result.exitCode).toBe(5);
      expect(result.stderr).toBe(`error: cannot reach ${dead}: nothing answers there (is the server running? --api-url or BAND_API_URL name another)\n`);
    }
  });

  it('https against an http server is one plain sentence', async () => {
    const https = server.url.replace('http:', 'https:');
    const result = await admin.band(['project', 'list', '--api-url', https]);
    expect(result.exitCode).toBe(5);
    expect(result.stderr).toBe(`error: ${https} answers in plain http, not https: use ${server.url}\n`);
  });

  it('an address ending in /api is one plain sentence', async () => {
    const result = await admin.band(['project', 'list', '--api-url', `${server.url}/api`]);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toBe(`error: the server address is without /api: use ${server.url}\n`);
  });
});

describe('stored logins', () => {
  it('localhost and 127.0.0.1 are the same server', async () => {
    const localhost = server.url.replace('127.0.0.1', 'localhost');
    const listed = await admin.band(['project', 'list', '--api-url', localhost]);
    expect(listed.stderr).toBe('');
    expect(listed.exitCode).toBe(0);
  });
});

describe('names', () => {
  it("an unknown cut's message points at band cut create", async () => {
    const result = await admin.band(['file', 'list', '--cut', 'Take 9', '--vibe', 'Verse', '--project', 'Demo']);
    expect(result.exitCode).toBe(6);
    expect(result.stderr).toBe('error: no cut named "Take 9" in vibe "Verse"; to make it: band cut create "Take 9" --vibe Verse --project Demo\n');
  });
});

describe('band file upload', () => {
  it('skips a file already on the cut with the same sha256, and says so; --duplicate uploads it on purpose', async () => {
    await writeFile(path.join(work, 'take.wav'), wavBytes(3));
    await ok(admin, ['file', 'upload', 'take.wav', ...cutFlags]);
    const again = await ok(admin, ['file', 'upload', 'take.wav', ...cutFlags]);
    expect(again.stderr.split('\n')).toContain('take.wav is already on cut Take 1 (the same content): skipped; --duplicate uploads it again');
    expect(again.stderr).not.toContain('uploading 1 file');
    const listed = async () => JSON.parse((await ok(admin, ['file', 'list', ...cutFlags, '--json'])).stdout) as unknown[];
    expect(await listed()).toHaveLength(1);

    await ok(admin, ['file', 'upload', 'take.wav', ...cutFlags, '--duplicate']);
    expect(await listed()).toHaveLength(2);
  });
});

describe('two servers', () => {
  it('logging in to a second server keeps the default (said how to switch); band auth status lists both; band auth use switches', async () => {
    const second = await startTestServer();
    const ben = await cliUser(server.url);
    try {
      await registerWithCli(ben, 'ben@example.com');
      const onSecond = await ben.band(['--api-url', second.url, 'auth', 'register', '--email', 'ben2@example.com', '--name', 'Ben Two', '--password-stdin'], {
        input: 'correct horse battery\n',
      });
      expect(onSecond.exitCode).toBe(0);
      expect(onSecond.stderr).toContain(`band still uses ${server.url} by default; to use ${second.url}: band auth use ${second.url}\n`);
      const byDefault = { env: { BAND_API_URL: undefined } };
      const who = async () => JSON.parse((await ben.band(['auth', 'status', '--json'], byDefault)).stdout).email as string;
      expect(await who()).toBe('ben@example.com');

      const status = await ben.band(['auth', 'status'], byDefault);
      expect(status.stdout).toContain(`Servers:     * ${server.url.replace('127.0.0.1', 'localhost')}  ben <ben@example.com>\n`);
      expect(status.stdout).toContain(`               ${second.url.replace('127.0.0.1', 'localhost')}  Ben Two <ben2@example.com>`);

      const used = await ben.band(['auth', 'use', second.url], byDefault);
      expect(used).toMatchObject({ exitCode: 0, stdout: `band now uses ${second.url} by default (logged in as Ben Two <ben2@example.com>)\n` });
      expect(await who()).toBe('ben2@example.com');
    } finally {
      await ben.cleanup();
      await second.close();
    }
  });
});

describe('refused and interrupted uploads', () => {
  it('a refused type prints the path once', async () => {
    await writeFile(path.join(work, 'notes.txt'), 'lyrics, verse 2');
    const result = await admin.band(['file', 'upload', 'notes.txt', ...cutFlags], { cwd: work });
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain('\nerror: notes.txt: accepted types are .mp3, .wav,');
    expect(result.stderr.split('notes.txt').length - 1).toBe(1);
  });

  it('an interrupted upload (Ctrl-C) says how to resume it (the built binary)', async () => {
    const big = path.join(work, 'long.wav');
    await writeFile(big, wavBytes(9, 16));
    await truncate(big, 90 * 1024 * 1024);
    const child = spawn(process.execPath, [BAND, 'file', 'upload', big, ...cutFlags], { env: admin.env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
      if (stderr.includes('uploading 1 file')) child.kill('SIGINT');
    });
    const [code] = await once(child, 'exit');
    expect(code).toBe(130);
    expect(stderr).toContain('interrupted: run the same command again to finish the upload (a large file resumes where it stopped)\n');
  });
});
