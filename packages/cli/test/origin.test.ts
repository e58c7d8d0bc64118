// Stored credentials belong to the server that issued them: a command against any other server is not
// logged in there, and no stored token (access or refresh) ever reaches it.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestServer, type TestServer } from '../../server/test/support/server.js';
import { type CliUser, cliUser, registerWithCli } from './support/cli.js';

vi.setConfig({ testTimeout: 90_000 });

interface Captured {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

/** A bare HTTP server on loopback that records every request (and WebSocket upgrade) and answers `[]`. */
async function captureServer(): Promise<{ url: string; requests: Captured[]; close(): Promise<void> }> {
  const requests: Captured[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      res.writeHead(200, { 'content-type': 'application/json' }).end('[]');
    });
  });
  server.on('upgrade', (req, socket) => {
    requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: '' });
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

let server: TestServer;
let capture: Awaited<ReturnType<typeof captureServer>>;

beforeAll(async () => {
  server = await startTestServer();
  capture = await captureServer();
});
afterAll(async () => {
  await capture?.close();
  await server?.close();
});

/** The one credential file of a user who logged in once (mode 0600, no keychain in these tests). */
async function storedFile(user: CliUser): Promise<string> {
  const directory = path.join(user.home, '.config/band/credentials');
  const files = (await readdir(directory, { recursive: true, withFileTypes: true })).filter((entry) => entry.isFile());
  expect(files).toHaveLength(1);
  return path.join(files[0]!.parentPath, files[0]!.name);
}

/** Runs commands that need a login against the capture server, and checks that none of them sent a token. */
async function nothingReachesCapture(user: CliUser, tokens: { accessToken: string; refreshToken: string }): Promise<void> {
  const notLoggedIn = `error: not logged in to ${capture.url} (profile default): run band auth login\n`;
  const viaFlag = await user.band(['--api-url', capture.url, 'project', 'list']);
  expect(viaFlag).toMatchObject({ exitCode: 4, stderr: notLoggedIn });
  const viaEnv = await user.band(['auth', 'status'], { env: { BAND_API_URL: capture.url } });
  expect(viaEnv).toMatchObject({ exitCode: 4, stderr: notLoggedIn });
  expect((await user.band(['auth', 'token', '--api-url', `${capture.url}/`])).exitCode).toBe(4);
  expect((await user.band(['storage', '--api-url', capture.url])).exitCode).toBe(4);
  const logout = await user.band(['auth', 'logout', '--api-url', capture.url]);
  expect(logout).toMatchObject({ exitCode: 0, stdout: `Not logged in to ${capture.url}\n` });

  for (const request of capture.requests) {
    const seen = JSON.stringify(request);
    expect(seen).not.toContain(tokens.accessToken);
    expect(seen).not.toContain(tokens.refreshToken);
    expect(request.headers.authorization).toBeUndefined();
  }
  // Still logged in where the tokens came from: nothing above logged out of it.
  expect((await user.band(['project', 'list', '--json'])).exitCode).toBe(0);
}

describe('credentials are bound to the server that issued them', () => {
  it('sends no stored token to another server, with a fresh or an expired access token', async () => {
    const ana = await cliUser(server.url);
    try {
      await registerWithCli(ana, 'ana@example.com');
      const file = await storedFile(ana);
      const stored = JSON.parse(await readFile(file, 'utf8'));
      await nothingReachesCapture(ana, stored);

      // Expired: refreshing would present the 30-day refresh token.
      server.clock.advance(server.config.accessTokenTtlSeconds + 1);
      await nothingReachesCapture(ana, stored);
      expect(JSON.parse(await readFile(file, 'utf8')).refreshToken).not.toBe(stored.refreshToken);
    } finally {
      await ana.cleanup();
    }
  });

  it('keeps a login per server: a second login does not disturb the first, logout ends only the current one', async () => {
    const second = await startTestServer();
    const ben = await cliUser(server.url);
    try {
      await registerWithCli(ben, 'ben@example.com');
      const onSecond = await ben.band(['--api-url', second.url, 'auth', 'register', '--email', 'ben2@example.com', '--name', 'Ben Two', '--password-stdin'], {
        input: 'correct horse battery\n',
      });
      expect(onSecond.exitCode).toBe(0);

      const status = async (url: string) => ben.band(['auth', 'status', '--json', '--api-url', url]);
      expect(JSON.parse((await status(server.url)).stdout).email).toBe('ben@example.com');
      expect(JSON.parse((await status(second.url)).stdout).email).toBe('ben2@example.com');
      // The same origin however it is written: upper case, a trailing slash.
      expect(JSON.parse((await status(`${server.url.toUpperCase()}/`)).stdout).email).toBe('ben@example.com');
      // localhost and 127.0.0.1 are one server: people write either.
      expect(JSON.parse((await status(server.url.replace('127.0.0.1', 'localhost'))).stdout).email).toBe('ben@example.com');
      expect(await status('ftp://127.0.0.1')).toMatchObject({ exitCode: 2, stderr: 'error: the server address must be an http or https URL, not "ftp://127.0.0.1"\n' });

      const logout = await ben.band(['auth', 'logout', '--api-url', second.url]);
      expect(logout).toMatchObject({ exitCode: 0, stdout: `Logged out of ${second.url}\n` });
      expect((await status(second.url)).exitCode).toBe(4);
      expect(JSON.parse((await status(server.url)).stdout).email).toBe('ben@example.com');
    } finally {
      await ben.cleanup();
      await second.close();
    }
  });

  it('binds a login stored by an earlier band (one pair per profile) to the server saved with it', async () => {
    const cleo = await cliUser(server.url);
    try {
      const registered = await fetch(`${server.url}/api/auth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'cleo@example.com', password: 'correct horse battery', name: 'Cleo' }),
      });
      const { accessToken, refreshToken, user } = (await registered.json()) as { accessToken: string; refreshToken: string; user: { id: string } };
      const config = path.join(cleo.home, '.config/band');
      await mkdir(path.join(config, 'credentials'), { recursive: true, mode: 0o700 });
      await writeFile(path.join(config, 'credentials/default.json'), JSON.stringify({ accessToken, refreshToken, accessTokenExpiresAt: 0 }), { mode: 0o600 });
      await writeFile(
        path.join(config, 'config.json'),
        JSON.stringify({ default: { apiUrl: server.url, credentialStore: 'file', user: { id: user.id, email: 'cleo@example.com', name: 'Cleo' } } }),
        { mode: 0o600 },
      );

      await nothingReachesCapture(cleo, { accessToken, refreshToken });
      const status = await cleo.band(['auth', 'status']);
      expect(status.exitCode).toBe(0);
      expect(status.stdout).toContain(`Logged in to ${server.url} as Cleo <cleo@example.com>`);
    } finally {
      await cleo.cleanup();
    }
  });
});
