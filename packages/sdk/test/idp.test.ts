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
  it('idpUrl() starts the flow; exchangeIdpCode() turns the loopback code into tokens, like a login', async () => {
    const cliRedirect = 'http://127.0.0.1:53682/callback';
    provider.accounts.set('sdk-subject', { email: 'sdk-idp@idp.example.com', email_verified: true, name: 'Idp User' });
    const pairs: TokenPair[] = [];
    const band = new BandClient({ baseUrl: server.url, onTokens: (pair) => void pairs.push(pair) });

    // The browser's part: our server → the provider → our callback → the loopback address with a code.
    const started = await fetch(band.auth.idpUrl({ cliRedirect }), { redirect: 'manual' });
    expect(started.status).toBe(302);
    const flowCookie = started.headers.getSetCookie().map((cookie) => cookie.split(';')[0]).join('; ');
    const callbackUrl = await provider.signIn(started.headers.get('location')!, 'sdk-subject');
    const landed = await fetch(callbackUrl, { redirect: 'manual', headers: { cookie: flowCookie } });
    const loopback = new URL(landed.headers.get('location')!);
    expect(`${loopback.origin}${loopback.pathname}`).toBe(cliRedirect);

    const result = await band.auth.exchangeIdpCode({ code: loopback.searchParams.get('code')!, redirectUri: cliRedirect });
    expect(result.user).toMatchObject({ email: 'sdk-idp@idp.example.com', name: 'Idp User' });
    expect(pairs).toEqual([{ accessToken: result.accessToken, refreshToken: result.refreshToken, expiresIn: result.expiresIn }]);
    expect(await band.auth.me()).toMatchObject({ id: result.user.id });
  });
});
