import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFile, stat, utimes } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestServer, type TestServer } from '../../server/test/support/server.js';
import { ANSI, type CliUser, cliUser, credentialFile, recordingClients, registerWithCli } from './support/cli.js';

// Each test runs many commands against a real server; on a loaded machine that takes a while.
vi.setConfig({ testTimeout: 90_000 });

let server: TestServer;
let ana: CliUser;

beforeAll(async () => {
  server = await startTestServer();
  ana = await cliUser(server.url);
});
afterAll(async () => {
  await ana?.cleanup();
  await server?.close();
});

describe('band auth', () => {
  it('registers, says who is logged in where, and keeps the refresh token in a 0600 file when there is no keychain', async () => {
    const registered = await ana.band(['auth', 'register', '--email', 'Ana@Example.com', '--name', 'Ana', '--password-stdin'], {
      input: 'correct horse battery\n',
    });
    expect(registered.exitCode).toBe(0);
    expect(registered.stderr).toMatch(/no OS keychain .*; storing credentials in .*credentials\/default@http%3A%2F%2Flocalhost%3A\d+\.json \(mode 0600\)/);
    expect(registered.stdout).toContain('as Ana <ana@example.com>');

    const file = credentialFile(ana, server.url);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await stat(path.dirname(file))).mode & 0o777).toBe(0o700);
    const stored = JSON.parse(await readFile(file, 'utf8'));
    expect(stored.refreshToken).toEqual(expect.any(String));
    const config = await readFile(path.join(ana.home, '.config/band/config.json'), 'utf8');
    expect(config).not.toContain(stored.refreshToken);

    const status = await ana.band(['auth', 'status']);
    expect(status.exitCode).toBe(0);
    expect(status.stdout).toContain(`Logged in to ${server.url} as Ana <ana@example.com> (site admin)`);
    expect(status.stdout).toContain(`${file} (file, mode 0600)`);
    expect(status.stdout).not.toMatch(ANSI);

    const json = await ana.band(['auth', 'status', '--json']);
    expect(JSON.parse(json.stdout)).toEqual({
      id: expect.any(String),
      email: 'ana@example.com',
      name: 'Ana',
      role: 'ADMIN',
      avatarUrl: null,
      createdAt: expect.any(String),
    });
  });

  it('logs out (the session ends on the server too) and in again with --password-stdin', async () => {
    const file = credentialFile(ana, server.url);
    const { refreshToken } = JSON.parse(await readFile(file, 'utf8'));
    const out = await ana.band(['auth', 'logout']);
    expect(out.exitCode).toBe(0);
    await expect(stat(file)).rejects.toThrow();
    const refreshed = await fetch(`${server.url}/api/auth/refresh`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ refreshToken }),
    });
    expect(refreshed.status).toBe(401);

    const status = await ana.band(['auth', 'status']);
    expect(status.exitCode).toBe(4);
    expect(status.stderr.trim()).toBe(`error: not logged in to ${server.url} (profile default): run band auth login`);

    const wrong = await ana.band(['auth', 'login', '--email', 'ana@example.com', '--password-stdin'], { input: 'wrong password\n' });
    expect(wrong.exitCode).toBe(4);
    expect(wrong.stderr.split('\n').filter(Boolean)).toHaveLength(1);
    expect(wrong.stderr).not.toMatch(/at .*\.js:\d+/);

    const login = await ana.band(['auth', 'login', '--email', 'ana@example.com', '--password-stdin', '--json'], { input: 'correct horse battery\n' });
    expect(login.exitCode).toBe(0);
    expect(JSON.parse(login.stdout)).toMatchObject({ email: 'ana@example.com', name: 'Ana', role: 'ADMIN' });
  });

  it('refuses to prompt off a terminal: usage error, exit 2', async () => {
    const result = await ana.band(['auth', 'login', '--email', 'ana@example.com']);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('--password-stdin is required when not on a terminal');
  });

  it('prints a usable access token, and takes BAND_TOKEN without storing anything', async () => {
    const token = (await ana.band(['auth', 'token'])).stdout.trim();
    const me = await fetch(`${server.url}/api/auth/me`, { headers: { authorization: `Bearer ${token}` } });
    expect(me.status).toBe(200);

    const other = await cliUser(server.url, { BAND_TOKEN: token });
    try {
      const status = await other.band(['auth', 'status']);
      expect(status.exitCode).toBe(0);
      expect(status.stdout).toContain('BAND_TOKEN environment variable (nothing stored)');
      await expect(stat(path.join(other.home, '.config/band/credentials'))).rejects.toThrow();
    } finally {
      await other.cleanup();
    }
  });

  it('logs in for one run with BAND_EMAIL and BAND_PASSWORD, storing nothing', async () => {
    const ci = await cliUser(server.url, { BAND_EMAIL: 'ana@example.com', BAND_PASSWORD: 'correct horse battery', CI: 'true' });
    try {
      const status = await ci.band(['auth', 'status']);
      expect(status.exitCode).toBe(0);
      expect(status.stdout).toContain('BAND_EMAIL and BAND_PASSWORD, for this run only');
      await expect(stat(path.join(ci.home, '.config/band/credentials'))).rejects.toThrow();
      const failing = await ci.band(['project', 'list'], { env: { BAND_PASSWORD: 'wrong password' } });
      expect(failing.exitCode).toBe(4);
      // The token printed for a script outlives the run that signed in for it.
      const token = await ci.band(['auth', 'token']);
      expect(token.exitCode).toBe(0);
      const me = await fetch(`${server.url}/api/auth/me`, { headers: { authorization: `Bearer ${token.stdout.trim()}` } });
      expect(me.status).toBe(200);
    } finally {
      await ci.cleanup();
    }
  });

  it('ends the session a BAND_EMAIL run signed in for, unless the run printed its token (requests recorded through the factory)', async () => {
    const ci = await cliUser(server.url, { BAND_EMAIL: 'ana@example.com', BAND_PASSWORD: 'correct horse battery', CI: 'true' });
    const recorded = recordingClients();
    try {
      expect((await ci.band(['project', 'list'], { newClient: recorded.newClient })).exitCode).toBe(0);
      expect(recorded.requests).toEqual(['POST /api/auth/login', 'GET /api/projects', 'POST /api/auth/logout']);
      recorded.requests.length = 0;
      expect((await ci.band(['auth', 'token'], { newClient: recorded.newClient })).exitCode).toBe(0);
      expect(recorded.requests).toEqual(['POST /api/auth/login']);
    } finally {
      await recorded.close();
      await ci.cleanup();
    }
  });

  it('says so when the server has no identity provider for --web', async () => {
    const result = await ana.band(['auth', 'login', '--web']);
    expect(result.exitCode).toBe(6);
    expect(result.stderr.trim()).toBe('error: this server has no identity provider configured (IDP_DISABLED)');
  });

  it("shows the server's detail with its request id, the one the server's log line names", async () => {
    const missing = '00000000-0000-4000-8000-000000000000';
    const plain = await ana.band(['project', 'show', missing]);
    expect(plain.exitCode).toBe(6);
    expect(plain.stderr).toMatch(/^error: [^\n]*not found \(request id [\w-]+\)\n$/i);
  });

  it('exits 5 when the server cannot be reached, with one line', async () => {
    // A login: no stored credentials are needed (and those of this profile are not for that address).
    const result = await ana.band(['auth', 'login', '--email', 'ana@example.com', '--password-stdin', '--api-url', 'http://127.0.0.1:9'], {
      input: 'correct horse battery\n',
    });
    expect(result.exitCode).toBe(5);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('documents the exit codes and answers usage errors with exit 2 (the built binary)', async () => {
    const help = await ana.bandProcess(['help', 'exit-codes']);
    expect(help.exitCode).toBe(0);
    for (const code of ['0', '1', '2', '3', '4', '5', '6', '130']) expect(help.stdout).toMatch(new RegExp(`^  ${code} +\\S`, 'm'));
    expect((await ana.bandProcess(['project', 'frobnicate'])).exitCode).toBe(2);
    expect((await ana.bandProcess(['--no-such-flag'])).exitCode).toBe(2);
    expect((await ana.bandProcess(['auth', 'status', '--profile', '../elsewhere'])).exitCode).toBe(2);
    const version = await ana.bandProcess(['--version']);
    expect(version).toMatchObject({ exitCode: 0, stdout: '0.1.0\n' });
  });
});

describe('band auth token', () => {
  it('refreshes an access token that is due before printing it, and stores the new pair', async () => {
    const due = await startTestServer({ ACCESS_TOKEN_TTL_SECONDS: '1' });
    // Two seconds behind, it signs access tokens that have already expired by the real clock.
    due.clock.advance(-2);
    const cat = await cliUser(due.url);
    try {
      await registerWithCli(cat, 'cat@example.com');
      const before = JSON.parse(await readFile(credentialFile(cat, due.url), 'utf8'));
      const printed = await cat.band(['auth', 'token']);
      expect(printed.exitCode).toBe(0);
      // Within one second the new access token can equal the old one (same session, same iat): the rotated
      // refresh token is what shows the pair was refreshed.
      const after = JSON.parse(await readFile(credentialFile(cat, due.url), 'utf8'));
      expect(after.refreshToken).not.toBe(before.refreshToken);
      expect(after.accessToken).toBe(printed.stdout.trim());
    } finally {
      await cat.cleanup();
      await due.close();
    }
  });
});

describe('band processes refreshing the same expired credentials at the same moment', () => {
  let shortLived: TestServer;
  let ben: CliUser;

  beforeAll(async () => {
    shortLived = await startTestServer();
    ben = await cliUser(shortLived.url);
    await registerWithCli(ben, 'ben@example.com');
  });
  afterAll(async () => {
    await ben?.cleanup();
    await shortLived?.close();
  });

  const statusOfFour = async (user: CliUser, email: string) => {
    const results = await Promise.all([1, 2, 3, 4].map(() => user.bandProcess(['auth', 'status', '--json'])));
    for (const result of results) {
      expect(result.stderr).toBe('');
      expect(result.exitCode).toBe(0);
      expect(JSON.parse(result.stdout).email).toBe(email);
    }
  };

  it('all succeed when the access token really expired, round after round (the session is never revoked)', async () => {
    for (let round = 0; round < 3; round += 1) {
      // The server's clock passes the token's end: each process learns it from a 401 TOKEN_EXPIRED.
      shortLived.clock.advance(shortLived.config.accessTokenTtlSeconds + 1);
      await statusOfFour(ben, 'ben@example.com');
    }
  });

  it('rotate once and share the result: the others re-read the new pair instead of rotating again', async () => {
    const file = credentialFile(ben, shortLived.url);
    const before = JSON.parse(await readFile(file, 'utf8'));
    shortLived.clock.advance(shortLived.config.accessTokenTtlSeconds + 1);
    await statusOfFour(ben, 'ben@example.com');
    const after = JSON.parse(await readFile(file, 'utf8'));
    expect(after.refreshToken).not.toBe(before.refreshToken);
    // A second rotation would have presented a rotated token and revoked the session: it still works.
    expect((await ben.band(['project', 'list', '--json'])).exitCode).toBe(0);
  });

  it('takes over the refresh lock of a band process killed while holding it', async () => {
    const lockPath = path.join(ben.home, '.config/band/default.refresh.lock');
    // A process takes the profile's refresh lock as band does (proper-lockfile) and is killed holding it.
    const holder = spawn(
      process.execPath,
      ['--input-type=module', '-e', `import lockfile from 'proper-lockfile'; await lockfile.lock(${JSON.stringify(lockPath)}, { realpath: false, lockfilePath: ${JSON.stringify(lockPath)} }); console.log('locked'); setInterval(() => {}, 1000);`],
      { cwd: fileURLToPath(new URL('..', import.meta.url)), stdio: ['ignore', 'pipe', 'inherit'] },
    );
    await once(holder.stdout, 'data');
    holder.kill('SIGKILL');
    await once(holder, 'exit');
    expect((await stat(lockPath)).isDirectory()).toBe(true);
    // Nobody touches a dead holder's lock: a minute on, it is stale.
    const aMinuteAgo = new Date(Date.now() - 60_000);
    await utimes(lockPath, aMinuteAgo, aMinuteAgo);
    shortLived.clock.advance(shortLived.config.accessTokenTtlSeconds + 1);
    await statusOfFour(ben, 'ben@example.com');
    await expect(stat(lockPath)).rejects.toMatchObject({ code: 'ENOENT' });
  });
});
