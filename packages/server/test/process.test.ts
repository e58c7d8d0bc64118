import { chmod, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { existsSync } from 'node:fs';
import { request } from 'node:http';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, onTestFinished, vi } from 'vitest';
import { client } from './support/http.js';
import { runServerCommand, spawnServer } from './support/process.js';
import { createTestDatabase } from './support/server.js';

// The built server on its embedded default: its own PostgreSQL under DATA_DIR, as `pnpm start` runs it.
describe('the server process on the embedded database', () => {
  let dataDir: string;

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'bandcollab-process-'));
    await chmod(dataDir, 0o755);
  });
  afterAll(() => rm(dataDir, { recursive: true, force: true }));

  // Three starts of an embedded PostgreSQL (the first runs initdb) and a server command: 30 s ran out on a loaded machine.
  it('keeps its users across a SIGKILL and a restart, stops cleanly on SIGTERM, and sets site roles', async () => {
    const env = { DATA_DIR: dataDir };
    const first = await spawnServer(env);
    const api = client(first.url);
    const admin = await api.register({ email: 'first@example.com', password: 'password-123' });
    const member = await api.register({ email: 'second@example.com', password: 'password-123' });
    expect(admin.user.role).toBe('ADMIN');
    expect(member.user.role).toBe('MEMBER');
    const secret = await readFile(path.join(dataDir, 'jwt-secret'), 'utf8');
    expect(secret.length).toBeGreaterThanOrEqual(32);
    expect((await stat(path.join(dataDir, 'jwt-secret'))).mode & 0o777).toBe(0o600);

    first.child.kill('SIGKILL');
    await first.exited;

    const second = await spawnServer(env);
    const again = client(second.url);
    const login = await again.request('POST', '/api/auth/login', { json: { email: 'second@example.com', password: 'password-123' } });
    expect(login.status).toBe(200);
    // The signing secret was kept, so tokens issued before the crash still verify.
    expect((await again.request('GET', '/api/auth/me', { token: admin.accessToken })).status).toBe(200);

    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
    expect(second.output()).toMatch(/SIGTERM received/);
    // The embedded PostgreSQL was stopped, not left running: it removes its pid file on a clean shutdown.
    expect(existsSync(path.join(dataDir, 'postgres', 'postmaster.pid'))).toBe(false);

    const promoted = await runServerCommand(['set-role', 'SECOND@example.com', 'admin'], env);
    expect(promoted.stdout).toContain('second@example.com is now ADMIN');
    expect(promoted.code).toBe(0);
    const unknown = await runServerCommand(['set-role', 'nobody@example.com', 'ADMIN'], env);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('No user with email nobody@example.com');

    const third = await spawnServer(env);
    const me = await client(third.url).request('POST', '/api/auth/login', { json: { email: 'second@example.com', password: 'password-123' } });
    expect(me.body.user.role).toBe('ADMIN');
    third.child.kill('SIGINT');
    expect(await third.exited).toBe(0);
  }, 90_000);

  it('refuses bad settings with one clear line each and exit code 2', async () => {
    const result = await runServerCommand([], { DATA_DIR: dataDir, PORT: 'abc', LOG_LEVEL: 'loud', PUBLIC_URL: 'ftp://x', JWT_SECRET: 'short' });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('PORT must be a whole number');
    expect(result.stderr).toContain('LOG_LEVEL must be one of');
    expect(result.stderr).toContain('PUBLIC_URL must be an http(s) URL');
    expect(result.stderr).toContain('JWT_SECRET must be at least 32 characters');
  });
});

describe('the test support', () => {
  // Without DATA_DIR the server takes ./data of its working directory: a developer's live server's files.
  it('refuses to start a server or run a command without a DATA_DIR of the test own, and passes on none it inherits', async () => {
    const cwd = process.cwd();
    const hadData = existsSync(path.join(cwd, 'data'));
    const databaseUrl = await createTestDatabase();
    await expect(spawnServer({ DATABASE_URL: databaseUrl } as never)).rejects.toThrow(/DATA_DIR/);
    await expect(runServerCommand(['orphans'], { DATABASE_URL: databaseUrl } as never)).rejects.toThrow(/DATA_DIR/);
    expect(existsSync(path.join(cwd, 'data'))).toBe(hadData);
  });
});

describe('the server process on DATABASE_URL', () => {
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'bandcollab-process-url-'));
  });
  afterAll(() => rm(dataDir, { recursive: true, force: true }));

  it('finishes a request in flight when SIGTERM arrives, then exits 0 without waiting out keep-alive connections', async () => {
    const server = await spawnServer({ DATA_DIR: dataDir, DATABASE_URL: await createTestDatabase(), JWT_SECRET: 'x'.repeat(32) });
    const body = JSON.stringify({ email: 'drain@example.com', password: 'password-123', name: 'Drain' });
    const url = new URL('/api/auth/register', server.url);
    const waitForShutdown = () => vi.waitFor(() => expect(server.output()).toMatch(/SIGTERM received, shutting down/), { timeout: 10_000, interval: 20 });
    const answered = new Promise<{ status: number; text: string }>((resolve, reject) => {
      const headers = { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), expect: '100-continue' };
      const req = request(url, { method: 'POST', headers }, (res) => {
        let text = '';
        res.on('data', (chunk) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode!, text }));
      });
      req.on('error', reject);
      // "100 Continue" says the server has the request; then SIGTERM, and the body once the shutdown has begun: it must wait for it.
      req.on('continue', () => {
        server.child.kill('SIGTERM');
        void waitForShutdown().then(() => req.end(body), reject);
      });
      req.flushHeaders();
    });
    const response = await answered;
    const answeredAt = Date.now();
    expect(response.status, response.text).toBe(201);
    expect(await server.exited).toBe(0);
    // The client keeps its connection alive: the server closes it once idle rather than wait for the 5 s keep-alive timeout.
    expect(Date.now() - answeredAt).toBeLessThan(3000);
  });

  it('shuts down cleanly on a SIGTERM sent the moment its ready line is written', async () => {
    const preload = fileURLToPath(new URL('./support/sigterm-on-ready.mjs', import.meta.url));
    const ownDataDir = await mkdtemp(path.join(os.tmpdir(), 'bandcollab-process-ready-'));
    onTestFinished(() => rm(ownDataDir, { recursive: true, force: true }));
    const server = await spawnServer({ DATA_DIR: ownDataDir, DATABASE_URL: await createTestDatabase(), JWT_SECRET: 'x'.repeat(32), NODE_OPTIONS: `--import=${preload}` });
    expect(await server.exited, server.output()).toBe(0);
    expect(server.output()).toMatch(/SIGTERM received, shutting down/);
  });
});
