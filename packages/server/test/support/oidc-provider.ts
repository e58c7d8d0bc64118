import { generateKeyPairSync } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';
import { freePort } from '../../src/core/database.js';
import { startTestServer, type TestServer } from './server.js';

export const TEST_APP_URL = 'http://app.example.test';
const SIGNING_KID = 'test-provider-key';

/**
 * A test provider and a test server that signs in through it. The server's port is chosen first: the
 * provider must know the callback URL (on PUBLIC_URL) before the server starts.
 */
export async function startServerWithProvider(env: Record<string, string> = {}): Promise<{ server: TestServer; provider: TestProvider }> {
  const port = await freePort();
  const publicUrl = `http://127.0.0.1:${port}`;
  const provider = await startTestProvider(`${publicUrl}/api/auth/idp/callback`);
  const server = await startTestServer({ PORT: String(port), PUBLIC_URL: publicUrl, APP_URL: TEST_APP_URL, ...provider.env, ...env });
  return { server, provider };
}

/** What the provider says about an account: the claims our server reads. */
export interface ProviderAccount {
  email: string;
  email_verified: boolean;
  name?: string;
}

export interface TestProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Accounts by subject; add one before signing in as it. */
  accounts: Map<string, ProviderAccount>;
  /** Settings for a test server that uses this provider. */
  env: Record<string, string>;
  /**
   * Plays the user at the provider: opens the authorization URL, signs in as `subject`, consents, and returns
   * the URL the provider sends the browser back to (our callback, with `code` and `state`).
   */
  signIn(authorizationUrl: string, subject: string): Promise<URL>;
  /**
   * From now on the provider's published key set (jwks_uri) holds another key under the kid it signs with,
   * as an attacker in the middle would serve it: ID tokens then fail their signature check.
   */
  publishWrongKeys(): void;
  /** Plays a user who cancels at the provider's login page; returns the URL the provider sends back to. */
  cancel(authorizationUrl: string): Promise<URL>;
  close(): Promise<void>;
}

/**
 * A real OpenID Connect provider (oidc-provider, with its development login and consent pages) on a loopback
 * port, with one confidential client whose redirect URI is `redirectUri`.
 */
export async function startTestProvider(redirectUri: string): Promise<TestProvider> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const clientId = 'bandcollab';
  const clientSecret = 'bandcollab-test-client-secret';
  const accounts = new Map<string, ProviderAccount>();

  const signingKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' });
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: [redirectUri],
        response_types: ['code'],
        grant_types: ['authorization_code'],
      },
    ],
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    cookies: { keys: ['test-provider-cookie-key'] },
    // Own keys and lifetimes: the provider otherwise warns about its development defaults on every run.
    jwks: { keys: [{ ...signingKey, kid: SIGNING_KID }] },
    ttl: { AccessToken: 600, AuthorizationCode: 60, IdToken: 600, Interaction: 600, Session: 600, Grant: 600 },
    async findAccount(_ctx, subject) {
      const account = accounts.get(subject);
      if (!account) return undefined;
      return { accountId: subject, claims: async () => ({ sub: subject, ...account }) };
    },
  });
  let wrongKeys: string | null = null;
  const handle = provider.callback();
  server.on('request', (req, res) => {
    if (wrongKeys !== null && req.url === '/jwks') {
      res.writeHead(200, { 'content-type': 'application/jwk-set+json' }).end(wrongKeys);
      return;
    }
    void handle(req, res);
  });

  const jar = new Map<string, string>();
  const send = async (url: string, init: RequestInit = {}): Promise<Response> => {
    const response = await fetch(url, {
      ...init,
      redirect: 'manual',
      headers: { ...(init.headers as Record<string, string>), cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; ') },
    });
    for (const cookie of response.headers.getSetCookie()) {
      const [pair] = cookie.split(';');
      const at = pair!.indexOf('=');
      jar.set(pair!.slice(0, at), pair!.slice(at + 1));
    }
    return response;
  };

  return {
    issuer,
    clientId,
    clientSecret,
    accounts,
    env: { OIDC_ISSUER: issuer, OIDC_CLIENT_ID: clientId, OIDC_CLIENT_SECRET: clientSecret },
    async signIn(authorizationUrl, subject) {
      jar.clear();
      let url = new URL(authorizationUrl);
      for (let step = 0; step < 10; step += 1) {
        if (url.origin !== issuer) return url;
        let response = await send(url.href);
        if (response.status === 200 && url.pathname.startsWith('/interaction/')) {
          const page = await response.text();
          const prompt = /name="prompt" value="(\w+)"/.exec(page)?.[1];
          const form = new URLSearchParams({ prompt: prompt ?? '', login: subject, password: 'any' });
          response = await send(url.href, {
            method: 'POST',
            body: form.toString(),
            headers: { 'content-type': 'application/x-www-form-urlencoded' },
          });
        }
        const location = response.headers.get('location');
        if (!location) throw new Error(`the provider answered ${response.status} at ${url.pathname}: ${await response.text()}`);
        url = new URL(location, url);
      }
      throw new Error('the provider kept redirecting');
    },
    publishWrongKeys() {
      const { n, e } = generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey.export({ format: 'jwk' });
      wrongKeys = JSON.stringify({ keys: [{ kty: 'RSA', n, e, kid: SIGNING_KID, use: 'sig', alg: 'RS256' }] });
    },
    async cancel(authorizationUrl) {
      jar.clear();
      const login = new URL((await send(authorizationUrl)).headers.get('location')!, issuer);
      const abort = await send(`${login.href}/abort`);
      const resume = new URL(abort.headers.get('location')!, issuer);
      return new URL((await send(resume.href)).headers.get('location')!, issuer);
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
