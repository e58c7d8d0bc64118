import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// Type only: brings the test cluster's `inject('postgresUrl')` typing into this package's type check.
import type {} from '../../server/test/support/global-setup.js';
import { startServerWithProvider, type TestProvider } from '../../server/test/support/oidc-provider.js';
import { startTestServer, type TestServer } from '../../server/test/support/server.js';
import { EXIT } from '../src/exit-codes.js';
import { BAND, type CliUser, cliUser, type RunResult } from './support/cli.js';

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

/**
 * Starts `band auth login --web` for `who`, which keeps running until the browser comes back. No display and
 * CI set: it opens no browser and prints the address instead.
 */
function webLogin(who: CliUser): { child: ChildProcessWithoutNullStreams; output: () => string; finished: Promise<RunResult> } {
  const child = spawn(process.execPath, [BAND, '--insecure-storage', 'auth', 'login', '--web'], { env: { ...who.env, CI: 'true' } });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const finished = new Promise<RunResult>((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
  return { child, output: () => stdout + stderr, finished };
}

/** The address `band auth login --web` prints for the user to open. */
async function printedAddress(run: ReturnType<typeof webLogin>): Promise<string> {
  for (let waited = 0; waited < 20_000; waited += 50) {
    const found = /open this address in a browser to log in: (\S+)/.exec(run.output());
    if (found) return found[1]!;
    if (run.child.exitCode !== null) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`band printed no address:\n${run.output()}`);
}

/**
 * Plays the browser: opens the printed address on our server, signs in at the provider, follows the
 * callback, and delivers its redirect to the command's loopback listener. Returns that listener's page.
 */
async function browser(address: string, subject: string): Promise<{ loopback: URL; page: string }> {
  const start = await fetch(address, { redirect: 'manual' });
  expect(start.status).toBe(302);
  const flowCookie = start.headers.getSetCookie().find((cookie) => cookie.startsWith('idp_flow='))!.split(';')[0]!;
  const callbackUrl = await provider.signIn(start.headers.get('location')!, subject);
  const callback = await fetch(callbackUrl, { redirect: 'manual', headers: { cookie: flowCookie } });
  expect(callback.status).toBe(302);
  const loopback = new URL(callback.headers.get('location')!);
  const page = await (await fetch(loopback)).text();
  return { loopback, page };
}

describe('band auth login --web', () => {
  it('signs in through the provider via a loopback listener and a one-time code, then is logged in', async () => {
    provider.accounts.set('cli-user', { email: 'cli.user@idp.example.com', email_verified: true, name: 'Cli User' });
    const login = webLogin(user);
    const address = await printedAddress(login);
    expect(new URL(address).pathname).toBe('/api/auth/idp');
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
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout + result.stderr).toContain('cli.user@idp.example.com');

    const status = await user.band(['--json', 'auth', 'status']);
    expect(status.code, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({ email: 'cli.user@idp.example.com', name: 'Cli User' });

    // The code was single use: the loopback listener is gone, and the server refuses it a second time.
    const replay = await fetch(`${server.url}/api/auth/idp/exchange`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ code: loopback.searchParams.get('code'), redirectUri: cliRedirect }),
    });
    expect(replay.status).toBe(401);
  });

  it('fails with the provider-side reason when the sign-in is refused', async () => {
    await fetch(`${server.url}/api/auth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'taken@idp.example.com', password: 'password-1', name: 'Taken' }),
    });
    provider.accounts.set('unverified', { email: 'taken@idp.example.com', email_verified: false });
    const login = webLogin(user);
    const { page } = await browser(await printedAddress(login), 'unverified');
    expect(page).toContain('email_not_verified');
    const result = await login.finished;
    expect(result.code).toBe(EXIT.auth);
    expect(result.stderr).toContain('email_not_verified');
  });

  it('says the server has no identity provider instead of waiting', async () => {
    const plain = await startTestServer();
    const plainUser = await cliUser(plain.url);
    try {
      const result = await plainUser.band(['auth', 'login', '--web']);
      expect(result.code).toBe(EXIT.notFound);
      expect(result.stderr).toContain('IDP_DISABLED');
    } finally {
      await plainUser.cleanup();
      await plain.close();
    }
  });
});
