import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// Type only: brings the test cluster's `inject('postgresUrl')` typing into this package's type check.
import type {} from '../../server/test/support/global-setup.js';
import { startServerWithProvider, type TestProvider } from '../../server/test/support/oidc-provider.js';
import { startTestServer, type TestServer } from '../../server/test/support/server.js';
import { EXIT } from '../src/exit-codes.js';
import { BAND, type CliUser, cliUser, registerWithCli, type RunResult } from './support/cli.js';

let server: TestServer;
let provider: TestProvider;
let user: CliUser;

beforeAll(async () => {
  ({ server, provider } = await startServerWithProvider());
  user = await cliUser(server.url);
});
afterAll(async () => {
  await server?.close();
  await provider?.close();
  await user?.cleanup();
});

interface WebLogin {
  /** The address band hands the browser (or prints, with no browser). */
  address: Promise<string>;
  finished: Promise<RunResult>;
}

/**
 * Runs `band auth login --web` (or `link --web`) for `who` in-process with a browser of our own, which
 * receives the address band opens; the command keeps running until the browser comes back.
 */
function webLogin(who: CliUser, command: 'login' | 'link' = 'login'): WebLogin {
  let opened!: (url: string) => void;
  const address = new Promise<string>((resolve) => (opened = resolve));
  const finished = who.band(['--insecure-storage', 'auth', command, '--web'], { openBrowser: opened });
  const ended = finished.then((result): never => {
    throw new Error(`band opened no browser:\n${result.stdout}${result.stderr}`);
  });
  return { address: Promise.race([address, ended]), finished };
}

/**
 * The built binary with no display and CI set: it opens no browser and prints the address, which is read
 * from its output.
 */
function webLoginProcess(who: CliUser): WebLogin {
  const child = spawn(process.execPath, [BAND, '--insecure-storage', 'auth', 'login', '--web'], { env: { ...who.env, CI: 'true' } });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const finished = new Promise<RunResult>((resolve) => child.on('close', (exitCode) => resolve({ exitCode, stdout, stderr })));
  const address = (async () => {
    for (let waited = 0; waited < 20_000; waited += 50) {
      const found = /open this address in a browser to [\w ]+: (\S+)/.exec(stderr);
      if (found) return found[1]!;
      if (child.exitCode !== null) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`band printed no address:\n${stdout}${stderr}`);
  })();
  return { address, finished };
}

/**
 * Plays the browser: opens the printed address on our server, signs in at the provider, follows the
 * callback, and delivers its redirect to the command's loopback listener. Returns that listener's page.
 */
async function browser(address: string, subject: string, intercept?: (loopback: URL) => Promise<void>): Promise<{ loopback: URL; page: string }> {
  const start = await fetch(address, { redirect: 'manual' });
  expect(start.status).toBe(302);
  const flowCookie = start.headers.getSetCookie().find((cookie) => cookie.startsWith('idp_flow='))!.split(';')[0]!;
  const callbackUrl = await provider.signIn(start.headers.get('location')!, subject);
  const callback = await fetch(callbackUrl, { redirect: 'manual', headers: { cookie: flowCookie } });
  expect(callback.status).toBe(302);
  const loopback = new URL(callback.headers.get('location')!);
  await intercept?.(loopback);
  const page = await (await fetch(loopback)).text();
  return { loopback, page };
}

describe('band auth login --web', () => {
  it('signs in through the provider via a loopback listener and a one-time code, then is logged in (the built binary, printing the address)', async () => {
    provider.accounts.set('cli-user', { email: 'cli.user@idp.example.com', email_verified: true, name: 'Cli User' });
    const login = webLoginProcess(user);
    const address = await login.address;
    expect(new URL(address).pathname).toBe('/api/auth/idp');
    expect(new URL(address).searchParams.get('code_challenge')).toMatch(/^[\w-]{43}$/);
    const cliRedirect = new URL(address).searchParams.get('cliRedirect')!;
    expect(cliRedirect).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback\/[0-9a-f]{32}$/);
    // Only the unguessable path takes a code: another local page cannot log the command in as someone else.
    const guessed = await fetch(`${new URL(cliRedirect).origin}/callback?code=planted`);
    expect(guessed.status).toBe(404);

    const { loopback, page } = await browser(address, 'cli-user');
    expect(`${loopback.origin}${loopback.pathname}`).toBe(cliRedirect);
    expect(loopback.searchParams.get('code')).toMatch(/^[\w-]{43}$/);
    expect(page).toContain('You are logged in');

    const result = await login.finished;
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout + result.stderr).toContain('cli.user@idp.example.com');

    const status = await user.band(['--json', 'auth', 'status']);
    expect(status.exitCode, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({ email: 'cli.user@idp.example.com', name: 'Cli User' });

    // The code was single use: the loopback listener is gone, and the server refuses it a second time.
    const replay = await fetch(`${server.url}/api/auth/idp/exchange`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ code: loopback.searchParams.get('code'), redirectUri: cliRedirect }),
    });
    expect(replay.status).toBe(401);
  });

  it('binds the one-time code to the process: a code caught on its way to the listener is refused without the verifier, and burnt', async () => {
    provider.accounts.set('caught-user', { email: 'caught.user@idp.example.com', email_verified: true });
    const other = await cliUser(server.url);
    try {
      const login = webLogin(other);
      const address = await login.address;
      const cliRedirect = new URL(address).searchParams.get('cliRedirect')!;
      await browser(address, 'caught-user', async (loopback) => {
        const caught = await fetch(`${server.url}/api/auth/idp/exchange`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ code: loopback.searchParams.get('code'), redirectUri: cliRedirect }),
        });
        expect(caught.status).toBe(401);
      });
      const result = await login.finished;
      expect(result.exitCode).toBe(EXIT.auth);
      expect((await other.band(['auth', 'status'])).exitCode).toBe(EXIT.auth);
    } finally {
      await other.cleanup();
    }
  });

  it('fails with the provider-side reason when the sign-in is refused', async () => {
    await fetch(`${server.url}/api/auth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'taken@idp.example.com', password: 'password-1', name: 'Taken' }),
    });
    provider.accounts.set('same-email', { email: 'taken@idp.example.com', email_verified: true });
    const login = webLogin(user);
    const { page } = await browser(await login.address, 'same-email');
    expect(page).toContain('account_exists');
    const result = await login.finished;
    expect(result.exitCode).toBe(EXIT.auth);
    expect(result.stderr).toContain('account_exists');
  });

  it('says the server has no identity provider instead of waiting', async () => {
    const plain = await startTestServer();
    const plainUser = await cliUser(plain.url);
    try {
      const result = await plainUser.band(['auth', 'login', '--web']);
      expect(result.exitCode).toBe(EXIT.notFound);
      expect(result.stderr).toContain('IDP_DISABLED');
      await registerWithCli(plainUser, 'no-idp@band.example.com');
      const link = await plainUser.band(['auth', 'link', '--web']);
      expect(link.exitCode).toBe(EXIT.notFound);
      expect(link.stderr).toContain('identity provider');
    } finally {
      await plainUser.cleanup();
      await plain.close();
    }
  });
});

describe('band auth link --web', () => {
  it('links the provider account to the signed-in account, which a later login --web then signs in to', async () => {
    const linker = await cliUser(server.url);
    const later = await cliUser(server.url);
    try {
      await registerWithCli(linker, 'linker@band.example.com');
      provider.accounts.set('link-subject', { email: 'linker-elsewhere@idp.example.com', email_verified: false });
      const link = webLogin(linker, 'link');
      const { loopback, page } = await browser(await link.address, 'link-subject');
      expect(loopback.searchParams.get('code')).toMatch(/^[\w-]{43}$/);
      expect(page).toContain('Back to band');
      const result = await link.finished;
      expect(result.exitCode, result.stderr).toBe(0);
      expect(result.stdout).toContain('Linked your identity-provider account to');
      expect(result.stdout).toContain('linker@band.example.com');
      const [linkedTo] = await server.sql`select u.email from identities i join users u on u.id = i.user_id where i.subject = 'link-subject'`;
      expect(linkedTo).toEqual({ email: 'linker@band.example.com' });
      const status = await linker.band(['--json', 'auth', 'status']);
      expect(JSON.parse(status.stdout)).toMatchObject({ email: 'linker@band.example.com' });

      const login = webLogin(later);
      await browser(await login.address, 'link-subject');
      expect((await login.finished).exitCode).toBe(0);
      const laterStatus = await later.band(['--json', 'auth', 'status']);
      expect(JSON.parse(laterStatus.stdout)).toMatchObject({ email: 'linker@band.example.com' });
    } finally {
      await linker.cleanup();
      await later.cleanup();
    }
  });

  it('needs --web and a login', async () => {
    const stranger = await cliUser(server.url);
    try {
      expect((await stranger.band(['auth', 'link'])).exitCode).toBe(EXIT.usage);
      const result = await stranger.band(['auth', 'link', '--web']);
      expect(result.exitCode).toBe(EXIT.auth);
    } finally {
      await stranger.cleanup();
    }
  });
});
