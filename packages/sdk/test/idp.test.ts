import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServerWithProvider, type TestProvider } from '../../server/test/support/oidc-provider.js';
import { BandClient, type TokenPair } from '../src/index.js';
import type { TestServer } from './support.js';

let server: TestServer;
let provider: TestProvider;

beforeAll(async () => {
  ({ server, provider } = await startServerWithProvider());
});
afterAll(async () => {
  await server?.close();
  await provider?.close();
});

describe('command-line sign-in through the identity provider', () => {
  it('idpUrl() starts the flow; exchangeIdpCode() turns the loopback code into tokens with the verifier, like a login', async () => {
    const cliRedirect = 'http://127.0.0.1:53682/callback';
    const codeVerifier = randomBytes(32).toString('base64url');
    const codeChallenge = createHash('sha256').update(codeVerifier).digest('base64url');
    provider.accounts.set('sdk-subject', { email: 'sdk-idp@idp.example.com', email_verified: true, name: 'Idp User' });
    const pairs: TokenPair[] = [];
    const band = new BandClient({ baseUrl: server.url, onTokens: (pair) => void pairs.push(pair) });

    // idpLoginUrl() is idpUrl() once the server confirmed it has a provider to send the browser to.
    const address = await band.auth.idpLoginUrl({ cliRedirect, codeChallenge });
    expect(address).toBe(band.auth.idpUrl({ cliRedirect, codeChallenge }));
    // The browser's part: our server → the provider → our callback → the loopback address with a code.
    const started = await fetch(address, { redirect: 'manual' });
    expect(started.status).toBe(302);
    const flowCookie = started.headers.getSetCookie().map((cookie) => cookie.split(';')[0]).join('; ');
    const callbackUrl = await provider.signIn(started.headers.get('location')!, 'sdk-subject');
    const landed = await fetch(callbackUrl, { redirect: 'manual', headers: { cookie: flowCookie } });
    const loopback = new URL(landed.headers.get('location')!);
    expect(`${loopback.origin}${loopback.pathname}`).toBe(cliRedirect);

    const result = await band.auth.exchangeIdpCode({ code: loopback.searchParams.get('code')!, redirectUri: cliRedirect, codeVerifier });
    expect(result.user).toMatchObject({ email: 'sdk-idp@idp.example.com', name: 'Idp User' });
    expect(pairs).toEqual([{ accessToken: result.accessToken, refreshToken: result.refreshToken, expiresIn: result.expiresIn }]);
    expect(await band.auth.me()).toMatchObject({ id: result.user.id });
  });
});

describe('linking the identity provider to a signed-in account', () => {
  it('idpLinkUrl() hands back the address for the browser; linkIdp() redeems the code that comes back, with the verifier', async () => {
    const cliRedirect = 'http://127.0.0.1:53682/callback';
    const codeVerifier = randomBytes(32).toString('base64url');
    const codeChallenge = createHash('sha256').update(codeVerifier).digest('base64url');
    provider.accounts.set('sdk-link-subject', { email: 'elsewhere@idp.example.com', email_verified: true });
    const band = new BandClient({ baseUrl: server.url });
    const { user } = await band.auth.register({ email: 'sdk-linker@example.com', password: 'correct horse battery', name: 'Linker' });

    const address = await band.auth.idpLinkUrl({ cliRedirect, codeChallenge });
    expect(address.startsWith(`${server.url}/api/auth/idp?flow=`)).toBe(true);
    const started = await fetch(address, { redirect: 'manual' });
    const flowCookie = started.headers.getSetCookie().map((cookie) => cookie.split(';')[0]).join('; ');
    const callbackUrl = await provider.signIn(started.headers.get('location')!, 'sdk-link-subject');
    const landed = await fetch(callbackUrl, { redirect: 'manual', headers: { cookie: flowCookie } });
    const loopback = new URL(landed.headers.get('location')!);
    expect(`${loopback.origin}${loopback.pathname}`).toBe(cliRedirect);

    expect(await band.auth.linkIdp({ code: loopback.searchParams.get('code')!, redirectUri: cliRedirect, codeVerifier })).toEqual({ ok: true });
    expect(await server.sql`select user_id from identities where subject = 'sdk-link-subject'`).toEqual([{ user_id: user.id }]);
  });

  it('idpLinkUrl() without credentials is refused with 401', async () => {
    const options = { cliRedirect: 'http://127.0.0.1:53682/callback', codeChallenge: 'x'.repeat(43) };
    await expect(new BandClient({ baseUrl: server.url }).auth.idpLinkUrl(options)).rejects.toMatchObject({ status: 401, code: 'UNAUTHENTICATED' });
  });
});
