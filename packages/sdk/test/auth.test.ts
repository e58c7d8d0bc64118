import { type AddressInfo, createServer } from 'node:net';
import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BandApiError, BandClient, BandNetworkError, isAuthError, type TokenPair } from '../src/index.js';
import { PASSWORD, recordingDispatcher, registeredClient, startTestServer, type TestServer } from './support.js';

let server: TestServer;
/** A second instance on the same database whose access tokens live one second. */
let shortLived: TestServer;

beforeAll(async () => {
  server = await startTestServer();
  shortLived = await startTestServer({ ACCESS_TOKEN_TTL_SECONDS: '1', DATABASE_URL: server.env.DATABASE_URL! });
  // Two seconds behind, it signs access tokens that have already expired by the real clock.
  shortLived.clock.advance(-2);
});
afterAll(async () => {
  await shortLived?.close();
  await server?.close();
});

/**
 * A registered user's pair whose access token has expired. It comes from the one-second instance whose clock is behind; the
 * refreshed pairs come from `server` and live 15 minutes, so calls retried after the refresh cannot
 * meet a second expiry on a busy machine.
 */
async function expiredPair() {
  const { client, user } = await registeredClient(shortLived.url);
  return { tokens: client.sessionTokens, user };
}

describe('auth', () => {
  it('register and login keep the tokens, report them through onTokens, and authenticate me()', async () => {
    const pairs: TokenPair[] = [];
    const { client, user, email } = await registeredClient(server.url, { onTokens: (pair) => void pairs.push(pair) });
    expect(pairs).toHaveLength(1);
    expect(client.sessionTokens).toEqual({ accessToken: pairs[0]!.accessToken, refreshToken: pairs[0]!.refreshToken });
    expect(await client.auth.me()).toMatchObject({ id: user.id, email, avatarUrl: null });

    const other = new BandClient({ baseUrl: server.url, onTokens: (pair) => void pairs.push(pair) });
    const login = await other.auth.login({ email: email.toUpperCase(), password: PASSWORD, rememberMe: true });
    expect(login.user.id).toBe(user.id);
    expect(pairs).toHaveLength(2);
    expect(other.sessionTokens.refreshToken).toBe(login.refreshToken);
  });

  it('reports a refused login as a typed authentication error with the request id', async () => {
    const client = new BandClient({ baseUrl: server.url });
    const error = await client.auth.login({ email: 'nobody@example.com', password: 'wrong password' }).catch((e) => e);
    expect(error).toBeInstanceOf(BandApiError);
    expect(error).toMatchObject({ status: 401, code: 'INVALID_CREDENTIALS', errors: [], retryAfter: null });
    expect(error.requestId).toMatch(/\S/);
    expect(error.problem.title).toBeTruthy();
    expect(isAuthError(error)).toBe(true);
    expect(client.sessionTokens).toEqual({ accessToken: undefined, refreshToken: undefined });
  });

  it('carries the field errors of VALIDATION_FAILED', async () => {
    const client = new BandClient({ baseUrl: server.url });
    const error = await client.auth.register({ email: 'not-an-email', password: PASSWORD, name: 'X' }).catch((e) => e);
    expect(error).toMatchObject({ status: 400, code: 'VALIDATION_FAILED' });
    expect(error.errors).toContainEqual({ field: 'email', message: expect.any(String) });
    expect(isAuthError(error)).toBe(false);
  });

  it('refresh() rotates the pair and delivers it through onTokens; the old refresh token is dead', async () => {
    const pairs: TokenPair[] = [];
    const { client } = await registeredClient(server.url, { onTokens: (pair) => void pairs.push(pair) });
    const before = client.sessionTokens;
    const rotated = await client.auth.refresh();
    expect(rotated.refreshToken).not.toBe(before.refreshToken);
    expect(pairs.at(-1)).toEqual(rotated);
    expect(client.sessionTokens).toEqual({ accessToken: rotated.accessToken, refreshToken: rotated.refreshToken });

    const stale = new BandClient({ baseUrl: server.url, ...before });
    await expect(stale.auth.refresh()).rejects.toMatchObject({ status: 401, code: 'INVALID_REFRESH_TOKEN' });
  });

  it('50 concurrent calls with an expired access token make exactly one refresh, then all succeed', async () => {
    const { dispatcher, requests } = recordingDispatcher();
    const pairs: TokenPair[] = [];
    const { tokens, user } = await expiredPair();
    const client = new BandClient({ baseUrl: server.url, ...tokens, dispatcher, onTokens: (pair) => void pairs.push(pair) });
    const results = await Promise.all(Array.from({ length: 50 }, () => client.auth.me()));
    expect(results.every((me) => me.id === user.id)).toBe(true);
    expect(requests.filter((r) => r === 'POST /api/auth/refresh')).toHaveLength(1);
    expect(pairs).toHaveLength(1);
    expect(client.sessionTokens.accessToken).toBe(pairs[0]!.accessToken);
  });

  it('refreshes once and retries once when the server answers TOKEN_EXPIRED to a token the client thought valid', async () => {
    const { dispatcher, requests } = recordingDispatcher();
    const { client, user } = await registeredClient(server.url, { dispatcher });
    // A client clock far behind the server's: iat after exp makes the client see a long-lived token.
    const claims = JSON.parse(Buffer.from(client.sessionTokens.accessToken!.split('.')[1]!, 'base64url').toString());
    const now = Math.floor(Date.now() / 1000);
    const skewed = signAccessToken({ sub: claims.sub, sid: claims.sid, exp: now - 5, iat: now + 600 });
    client.setTokens({ accessToken: skewed, refreshToken: client.sessionTokens.refreshToken });

    const results = await Promise.all(Array.from({ length: 20 }, () => client.auth.me()));
    expect(results.every((me) => me.id === user.id)).toBe(true);
    expect(requests.filter((r) => r === 'POST /api/auth/refresh')).toHaveLength(1);
    expect(requests.filter((r) => r === 'GET /api/auth/me')).toHaveLength(40);
  });

  it('a failed refresh surfaces as an authentication error, once, and the dead pair is forgotten', async () => {
    const { dispatcher, requests } = recordingDispatcher();
    const { tokens } = await expiredPair();
    const client = new BandClient({ baseUrl: server.url, ...tokens, dispatcher });
    await new BandClient({ baseUrl: server.url, ...tokens }).auth.refresh(); // someone else rotated the pair first

    const errors = await Promise.all(Array.from({ length: 10 }, () => client.auth.me().catch((e) => e)));
    for (const error of errors) expect(isAuthError(error)).toBe(true);
    expect(errors[0]).toMatchObject({ code: 'INVALID_REFRESH_TOKEN' });
    expect(requests.filter((r) => r === 'POST /api/auth/refresh')).toHaveLength(1);
    expect(client.sessionTokens).toEqual({ accessToken: undefined, refreshToken: undefined });
    await expect(client.auth.me()).rejects.toMatchObject({ status: 401, code: 'UNAUTHENTICATED' });
  });

  it('logout ends the session on the server and forgets the tokens', async () => {
    const { client } = await registeredClient(server.url);
    const { accessToken } = client.sessionTokens;
    expect(await client.auth.logout()).toEqual({ ok: true });
    expect(client.sessionTokens).toEqual({ accessToken: undefined, refreshToken: undefined });
    const reused = new BandClient({ baseUrl: server.url, accessToken });
    await expect(reused.auth.me()).rejects.toMatchObject({ status: 401, code: 'UNAUTHENTICATED' });
  });

  it('builds the identity-provider address and reports IDP_DISABLED when it is off', async () => {
    const client = new BandClient({ baseUrl: `${server.url}/` });
    expect(client.auth.idpUrl({ cliRedirect: 'http://127.0.0.1:5000/cb', codeChallenge: 'challenge' })).toBe(
      `${server.url}/api/auth/idp?cliRedirect=${encodeURIComponent('http://127.0.0.1:5000/cb')}&code_challenge=challenge`,
    );
    expect(client.auth.idpUrl()).toBe(`${server.url}/api/auth/idp`);
    await expect(client.auth.exchangeIdpCode({ code: 'x', redirectUri: 'http://127.0.0.1:5000/cb', codeVerifier: 'x' })).rejects.toMatchObject({
      status: 404,
      code: 'IDP_DISABLED',
    });
    await expect(client.auth.idpLoginUrl({ cliRedirect: 'http://127.0.0.1:5000/cb', codeChallenge: 'x'.repeat(43) })).rejects.toMatchObject({
      status: 404,
      code: 'IDP_DISABLED',
    });
  });

  it('freshAccessToken() refreshes a due access token first, for use outside the client', async () => {
    const { tokens, user } = await expiredPair();
    const client = new BandClient({ baseUrl: server.url, ...tokens });
    const token = await client.freshAccessToken();
    expect(token).not.toBe(tokens.accessToken);
    expect(client.sessionTokens.accessToken).toBe(token);
    const me = await fetch(`${server.url}/api/auth/me`, { headers: { authorization: `Bearer ${token}` } });
    expect(await me.json()).toMatchObject({ id: user.id });
  });

  it('health() answers without an account', async () => {
    expect(await new BandClient({ baseUrl: server.url }).health()).toMatchObject({ status: 'ok', db: 'ok', version: expect.any(String) });
  });

  it('reports an unreachable server as a network error with its cause, after retrying a safe request', async () => {
    const { dispatcher, requests } = recordingDispatcher();
    // A port nothing listens on (fetch refuses the well-known ones, such as 9, before connecting).
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise((resolve) => closed.close(resolve));
    const client = new BandClient({ baseUrl: `http://127.0.0.1:${port}`, dispatcher, retries: 2 });
    const error = await client.health().catch((e) => e);
    expect(error).toBeInstanceOf(BandNetworkError);
    expect(error.cause).toMatchObject({ code: 'ECONNREFUSED' });
    expect(requests).toHaveLength(3);
    await expect(client.auth.login({ email: 'a@b.co', password: PASSWORD })).rejects.toBeInstanceOf(BandNetworkError);
    expect(requests).toHaveLength(4);
  });
});

function signAccessToken(claims: Record<string, unknown>): string {
  const encode = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const unsigned = `${encode({ alg: 'HS256', typ: 'JWT' })}.${encode(claims)}`;
  const signature = createHmac('sha256', server.env.JWT_SECRET!).update(unsigned).digest('base64url');
  return `${unsigned}.${signature}`;
}
