import { spawn } from 'node:child_process';
import { chmod, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { BandApiError, BandClient } from '@bandcollab/sdk';
import { describe, expect, it, type TestContext } from 'vitest';
import { client } from './support/http.js';
import { multipartPieces, rawUpload, sampleBytes, userWithCut } from './support/files.js';
import { runServerCommand, SERVER_BIN, serverEnvironment, type ServerProcess, spawnServer } from './support/process.js';
import { ConfigError, loadConfig } from '../src/core/config.js';
import { freePort, importWithoutExitHooks } from '../src/core/database.js';
import { until } from './support/until.js';

// The built server on its embedded PostgreSQL, as `pnpm start` runs it: admin commands beside it, Ctrl-C with
// uploads in flight, and its database dying under load.

/**
 * A DATA_DIR of the test's own, as the tests run side by side (most of their time is waiting: for PostgreSQL to
 * start, for grace periods to end); at the test's end its servers and database are killed and it is removed.
 */
async function setUp({ onTestFinished }: TestContext) {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'bandcollab-lifecycle-'));
  await chmod(dataDir, 0o755);
  const servers: ServerProcess[] = [];
  onTestFinished(async () => {
    for (const server of servers) {
      if (server.child.exitCode === null && server.child.signalCode === null) {
        server.child.kill('SIGKILL');
        await server.exited;
      }
    }
    const pid = await postmasterPid(dataDir).catch(() => null);
    if (pid !== null && isAlive(pid)) process.kill(pid, 'SIGKILL');
    await rm(dataDir, { recursive: true, force: true });
  });
  const spawn = async (...args: Parameters<typeof spawnServer>) => {
    const server = await spawnServer(...args);
    servers.push(server);
    return server;
  };
  return { dataDir, spawn };
}

/** The embedded PostgreSQL's postmaster, from the first line of its pid file. */
async function postmasterPid(dataDir: string): Promise<number> {
  return Number((await readFile(path.join(dataDir, 'postgres', 'postmaster.pid'), 'utf8')).split('\n')[0]);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The process group of a process (Linux: the fifth field of /proc/<pid>/stat). */
async function processGroupOf(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
}


const tempFiles = (dataDir: string) => readdir(path.join(dataDir, 'tmp')).catch(() => []);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.concurrent('admin commands beside a running server', () => {
  it('set-role connects to the live database, leaves it running, and the server keeps answering', async (context) => {
    const { dataDir, spawn } = await setUp(context);
    const env = { DATA_DIR: dataDir };
    const running = await spawn(env);
    const api = client(running.url);
    await api.register({ email: 'owner@example.com' });
    await api.register({ email: 'drummer@example.com', password: 'password-123' });
    const postgresPid = await postmasterPid(dataDir);

    const promoted = await runServerCommand(['set-role', 'drummer@example.com', 'ADMIN'], env);
    expect(promoted.stderr).toBe('');
    expect(promoted.stdout).toContain('drummer@example.com is now ADMIN');
    expect(promoted.code).toBe(0);

    expect(isAlive(postgresPid)).toBe(true);
    expect(await postmasterPid(dataDir)).toBe(postgresPid);
    expect((await api.request('GET', '/api/health')).status).toBe(200);
    const login = await api.request('POST', '/api/auth/login', { json: { email: 'drummer@example.com', password: 'password-123' } });
    expect(login.status).toBe(200);
    expect(login.body.user.role).toBe('ADMIN');

    running.child.kill('SIGTERM');
    expect(await running.exited).toBe(0);
    expect(isAlive(postgresPid)).toBe(false);
  });

  it('a second server on the same DATA_DIR refuses to start and leaves the first one serving', async (context) => {
    const { dataDir, spawn } = await setUp(context);
    const running = await spawn({ DATA_DIR: dataDir });
    const postgresPid = await postmasterPid(dataDir);
    const second = await runServerCommand([], { DATA_DIR: dataDir, PORT: '0' });
    expect(second.code).toBe(1);
    expect(second.stderr).toContain(`Another bandcollab server (pid ${running.child.pid}) runs on DATA_DIR ${dataDir}: stop it first`);
    expect(isAlive(postgresPid)).toBe(true);
    expect((await client(running.url).request('GET', '/api/health')).status).toBe(200);
  });

  it('set-role without its arguments, or with a role that does not exist, prints its usage and exits 2', async (context) => {
    const { dataDir } = await setUp(context);
    for (const args of [['set-role'], ['set-role', 'someone@example.com'], ['set-role', 'someone@example.com', 'OWNER']]) {
      const result = await runServerCommand(args, { DATA_DIR: dataDir });
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr).toContain('Usage: bandcollab-server');
      expect(result.stderr).toContain('set-role <email> <ADMIN|MEMBER>');
    }
    // Nothing was started for a usage error.
    expect(existsSync(path.join(dataDir, 'postgres'))).toBe(false);
  });
});

describe.concurrent('Ctrl-C', () => {
  it('SHUTDOWN_GRACE_SECONDS defaults to 30 and takes 0 to 3600', () => {
    expect(loadConfig({}).shutdownGraceSeconds).toBe(30);
    expect(loadConfig({ SHUTDOWN_GRACE_SECONDS: '0' }).shutdownGraceSeconds).toBe(0);
    expect(() => loadConfig({ SHUTDOWN_GRACE_SECONDS: '-1' })).toThrow(ConfigError);
    expect(() => loadConfig({ SHUTDOWN_GRACE_SECONDS: 'soon' })).toThrow(/SHUTDOWN_GRACE_SECONDS must be a whole number from 0 to 3600/);
  });

  it('lets an upload in flight finish, cuts the one that outlasts the grace period with a 503, stops the database, exits 0', async (context) => {
    const { dataDir, spawn } = await setUp(context);
    const server = await spawn({ DATA_DIR: dataDir, SHUTDOWN_GRACE_SECONDS: '2' }, { detached: true });
    const api = client(server.url);
    const owner = await userWithCut(api);
    const postgresPid = await postmasterPid(dataDir);
    // The database is in a process group of its own: the terminal's Ctrl-C does not reach it.
    expect(await processGroupOf(postgresPid)).toBe(postgresPid);
    expect(await processGroupOf(server.child.pid!)).toBe(server.child.pid);

    const bytes = sampleBytes('wav', 200_000);
    const finishing = multipartPieces(owner.cutId, 'finishing.wav');
    let finish = () => undefined as void;
    const finished = rawUpload(
      server.url,
      owner.token,
      { 'content-type': finishing.contentType, 'content-length': finishing.head.length + bytes.length + finishing.tail.length },
      (request) => {
        request.write(Buffer.concat([finishing.head, bytes.subarray(0, 50_000)]));
        finish = () => request.end(Buffer.concat([bytes.subarray(50_000), finishing.tail]));
      },
    );

    // Keeps sending, slowly, long past the grace period: only the shutdown can end it.
    const endless = multipartPieces(owner.cutId, 'endless.wav');
    let trickle: NodeJS.Timeout | undefined;
    const cut = rawUpload(server.url, owner.token, { 'content-type': endless.contentType, 'transfer-encoding': 'chunked' }, (request) => {
      request.write(Buffer.concat([endless.head, sampleBytes('wav', 20_000)]));
      trickle = setInterval(() => request.write(Buffer.alloc(1000, 1)), 100);
    });

    // The SDK's upload of a stream that never ends: it must report a shutdown, not a size limit.
    const sdk = new BandClient({ baseUrl: server.url, accessToken: owner.token });
    const sdkCut = sdk.files
      .upload({ cutId: owner.cutId, file: Readable.from(endlessWav()), filename: 'sdk.wav' })
      .then(() => null, (error: unknown) => error);

    await until('three uploads to be streaming', async () => (await tempFiles(dataDir)).length === 3, 30_000);
    process.kill(-server.child.pid!, 'SIGINT');
    // The rest of the body only once the shutdown has begun: the server must let this upload finish.
    await until('the shutdown to begin', () => /SIGINT received, shutting down/.test(server.output()), 30_000);
    finish();

    const done = await finished;
    expect(done?.status, done?.body).toBe(201);

    const refused = await cut;
    clearInterval(trickle);
    expect(refused, 'a 503 answer, not a reset connection').not.toBeNull();
    expect(refused!.status).toBe(503);
    expect(refused!.headers['retry-after']).toBeTruthy();
    expect(refused!.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(JSON.parse(refused!.body)).toMatchObject({ code: 'UNAVAILABLE', status: 503, detail: expect.stringMatching(/shutting down/) });

    const sdkError = await sdkCut;
    expect(sdkError).toBeInstanceOf(BandApiError);
    expect(sdkError).toMatchObject({ status: 503, code: 'UNAVAILABLE', retryAfter: expect.any(Number) });
    expect((sdkError as BandApiError).message).toMatch(/shutting down/);
    expect((sdkError as BandApiError).message).not.toMatch(/size limit/);

    expect(await server.exited).toBe(0);
    expect(server.output()).not.toMatch(/shutdown failed|CONNECTION_CLOSED|error/i);
    expect(await tempFiles(dataDir)).toEqual([]);
    expect(await readdir(path.join(dataDir, 'files'))).toHaveLength(1);
    expect(isAlive(postgresPid)).toBe(false);
    expect(existsSync(path.join(dataDir, 'postgres', 'postmaster.pid'))).toBe(false);
  });
  it('ends the grace period at a second Ctrl-C, taking two signals within a second as one', async (context) => {
    const { dataDir, spawn } = await setUp(context);
    // A grace period far longer than the test may run: only the second signal can end it in time.
    const server = await spawn({ DATA_DIR: dataDir, SHUTDOWN_GRACE_SECONDS: '3600' }, { detached: true });
    const owner = await userWithCut(client(server.url));
    const endless = multipartPieces(owner.cutId, 'endless.wav');
    let trickle: NodeJS.Timeout | undefined;
    const cut = rawUpload(server.url, owner.token, { 'content-type': endless.contentType, 'transfer-encoding': 'chunked' }, (request) => {
      request.write(Buffer.concat([endless.head, sampleBytes('wav', 20_000)]));
      trickle = setInterval(() => request.write(Buffer.alloc(1000, 1)), 100);
    });
    await until('the upload to be streaming', async () => (await tempFiles(dataDir)).length === 1, 30_000);
    process.kill(-server.child.pid!, 'SIGINT');
    await until('the shutdown to begin', () => /SIGINT received, shutting down/.test(server.output()), 30_000);
    // The terminal's SIGINT and the one `pnpm start` forwards arrive together: that is one Ctrl-C.
    process.kill(-server.child.pid!, 'SIGINT');
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(server.output()).not.toMatch(/received again/);
    expect(await tempFiles(dataDir), 'the upload still streaming, within its grace').toHaveLength(1);
    process.kill(-server.child.pid!, 'SIGINT');

    const refused = await cut;
    clearInterval(trickle);
    expect(refused?.status).toBe(503);
    expect(await server.exited).toBe(0);
    expect(server.output()).toMatch(/SIGINT received again/);
    expect(await tempFiles(dataDir)).toEqual([]);
  });
});

async function* endlessWav(): AsyncGenerator<Buffer> {
  yield sampleBytes('wav', 20_000);
  for (;;) {
    await sleep(100);
    yield Buffer.alloc(1000, 2);
  }
}

describe.concurrent('a closed stdout', () => {
  it('never kills the server: `pnpm start | grep -m 1 listening`, then SIGINT, shuts down cleanly and stops the database', async (context) => {
    const { dataDir } = await setUp(context);
    const server = spawn(process.execPath, [SERVER_BIN], { env: serverEnvironment({ DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'info' }), stdio: ['ignore', 'pipe', 'pipe'] });
    // The pipe's only reader: it prints the ready line and exits, as tee or jq do at a Ctrl-C.
    const reader = spawn('grep', ['-m', '1', 'listening on'], { stdio: [server.stdout, 'pipe', 'inherit'] });
    server.stdout.destroy();
    try {
      let stderr = '';
      server.stderr.on('data', (chunk) => (stderr += chunk));
      const exited = new Promise<number | null>((resolve) => server.once('exit', (code) => resolve(code)));
      let firstLine = '';
      reader.stdout.on('data', (chunk) => (firstLine += chunk));
      await new Promise((resolve) => reader.once('exit', resolve));
      const url = /listening on (http:\/\/\S+)/.exec(firstLine)?.[1];
      expect(url, `${firstLine}${stderr}`).toBeDefined();
      // Still serving with nobody reading its log: every request line now meets a closed pipe.
      expect((await client(url!).request('GET', '/api/health')).status).toBe(200);
      const postgresPid = await postmasterPid(dataDir);

      server.kill('SIGINT');
      expect(await exited, stderr).toBe(0);
      expect(stderr).not.toMatch(/EPIPE/);
      expect(isAlive(postgresPid)).toBe(false);
      expect(existsSync(path.join(dataDir, 'postgres', 'postmaster.pid'))).toBe(false);
    } finally {
      if (server.exitCode === null && server.signalCode === null) server.kill('SIGKILL');
    }
  });
});

describe.concurrent('an external database (DATABASE_URL) that goes away', () => {
  it('answers 503 UNAVAILABLE with Retry-After while it is down, and serves again once it is back', async (context) => {
    const { dataDir, spawn } = await setUp(context);
    // A PostgreSQL of this test's own, so it can be stopped and started again on the same port.
    const EmbeddedPostgres = await importWithoutExitHooks();
    const port = await freePort();
    // Beside DATA_DIR, not in it: the server makes DATA_DIR 0700 at start, and as root this PostgreSQL runs
    // as the postgres user, who could then not reach its own directory to start again.
    const externalDir = await mkdtemp(path.join(os.tmpdir(), 'bandcollab-external-db-'));
    await chmod(externalDir, 0o755);
    const pg = new EmbeddedPostgres({
      databaseDir: path.join(externalDir, 'data'),
      port,
      user: 'postgres',
      password: 'external-password',
      // Kept across stop and start; the whole DATA_DIR goes after the test.
      persistent: true,
      createPostgresUser: process.getuid?.() === 0,
      postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='],
      onLog: () => undefined,
      onError: () => undefined,
    });
    await pg.initialise();
    await pg.start();
    let running: ServerProcess | undefined;
    try {
      running = await spawn({ DATA_DIR: dataDir, DATABASE_URL: `postgres://postgres:external-password@127.0.0.1:${port}/postgres` });
      const api = client(running.url);
      const user = await api.register();
      expect((await api.request('GET', '/api/projects', { token: user.accessToken })).status).toBe(200);

      await pg.stop();
      for (const route of ['/api/health', '/api/projects', '/api/auth/me']) {
        const response = await api.request('GET', route, { token: user.accessToken });
        expect(response.status, `${route}: ${response.text}`).toBe(503);
        expect(response.body.code).toBe('UNAVAILABLE');
        expect(response.headers.get('retry-after')).toBeTruthy();
        expect(response.text).not.toMatch(/ECONNREFUSED|127\.0\.0\.1|postgres/i);
      }

      await pg.start();
      await until('the pool to reconnect', async () => (await api.request('GET', '/api/projects', { token: user.accessToken })).status === 200, 30_000);
      expect((await api.request('GET', '/api/health')).status).toBe(200);
      expect(running.child.exitCode).toBeNull();
    } finally {
      running?.child.kill('SIGKILL');
      await running?.exited;
      await pg.stop();
      await rm(externalDir, { recursive: true, force: true });
    }
  }, 120_000);
});

// Alone, after the others: its load and its five restarts are timed.
describe('the embedded PostgreSQL killed under load', () => {
  it('answers 503 with Retry-After while it is down, never 500, restarts it 5 times, then exits 1 for its supervisor', async (context) => {
    const { dataDir, spawn } = await setUp(context);
    const server = await spawn({ DATA_DIR: dataDir });
    const api = client(server.url);
    const user = await api.register();
    const statuses = new Map<number, number>();
    const problems: string[] = [];
    let loading = true;
    let answered = 0;
    /** Waits until the load has had `count` more answers: it keeps meeting the server, whatever state it is in. */
    const moreAnswers = (count: number) => {
      const from = answered;
      return until(`${count} more answers to the load`, () => answered >= from + count, 30_000);
    };
    const load = async () => {
      while (loading) {
        for (const [method, route] of [['GET', '/api/health'], ['GET', '/api/projects'], ['POST', '/api/projects']] as const) {
          const response = await api
            .request(method, route, { token: user.accessToken, json: method === 'POST' ? { name: 'Under load' } : undefined })
            .catch((error: unknown) => ({ status: 0, headers: new Headers(), body: { error: String(error) }, text: String(error) }));
          statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
          answered += 1;
          if (response.status === 503 && (response.body?.code !== 'UNAVAILABLE' || !response.headers.get('retry-after'))) {
            problems.push(`503 without UNAVAILABLE and Retry-After: ${response.text}`);
          }
          if (![200, 201, 503].includes(response.status)) problems.push(`${method} ${route}: ${response.status} ${response.text}`);
        }
      }
    };
    const clients = Array.from({ length: 4 }, load);

    const killAndWait = async () => {
      const killed = await postmasterPid(dataDir);
      process.kill(killed, 'SIGKILL');
      await until('the database to die', async () => !isAlive(killed), 30_000);
      return killed;
    };
    const survived = 5;
    const outages: number[] = [];
    for (let round = 0; round < survived; round++) {
      await moreAnswers(12);
      const killed = await killAndWait();
      const downAt = Date.now();
      await until(`the database to be restarted (round ${round + 1})`, async () => (await postmasterPid(dataDir).catch(() => killed)) !== killed && (await api.request('GET', '/api/health')).status === 200, 60_000).catch((error: Error) => {
        throw new Error(`${error.message}\n${server.output().slice(-4000)}`);
      });
      outages.push(Date.now() - downAt);
    }
    await moreAnswers(12);
    loading = false;
    await Promise.all(clients);

    console.log(
      `database killed ${survived} times under load, restarted each time (back after ${outages.join(', ')} ms); ` +
        `statuses seen: ${JSON.stringify(Object.fromEntries(statuses))}`,
    );
    // A 500 is logged as an unhandled error, with what was thrown: the message says which.
    expect(problems, server.output().split('\n').filter((line) => line.includes('"unhandled error"')).join('\n')).toEqual([]);
    expect(statuses.get(503) ?? 0).toBeGreaterThan(0);
    expect(server.output()).toMatch(/the embedded PostgreSQL exited unexpectedly/);

    // One death too many within ten minutes: the server gives up and exits non-zero, for its supervisor to act.
    const last = await killAndWait();
    expect(await server.exited).toBe(1);
    expect(server.output()).toMatch(/the database is lost/);
    expect(isAlive(last)).toBe(false);

    // As a supervisor would: a new server on the same DATA_DIR serves again.
    const again = await spawn({ DATA_DIR: dataDir });
    expect((await client(again.url).request('GET', '/api/health')).status).toBe(200);
    again.child.kill('SIGTERM');
    expect(await again.exited).toBe(0);
    expect(existsSync(path.join(dataDir, 'postgres', 'postmaster.pid'))).toBe(false);
  }, 240_000);
});
