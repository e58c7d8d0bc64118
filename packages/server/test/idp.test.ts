import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FLOW_COOKIE, sealFlow } from '../src/auth/idp-flow.js';
import { client } from './support/http.js';
import { startServerWithProvider, TEST_APP_URL, type TestProvider } from './support/oidc-provider.js';
import { startTestServer, type TestServer } from './support/server.js';

let server: TestServer;
let provider: TestProvider;
let api: ReturnType<typeof client>;

beforeAll(async () => {
  ({ server, provider } = await startServerWithProvider());
  api = client(server.url);
});
afterAll(async () => {
  await server?.close();
  await provider?.close();
});

let subjects = 0;
/** A fresh account at the provider. */
function providerAccount(account: { email?: string; email_verified?: boolean; name?: string } = {}) {
  subjects += 1;
  const subject = `subject-${subjects}-${Math.random().toString(36).slice(2, 8)}`;
  const email = account.email ?? `${subject}@idp.example.com`;
  provider.accounts.set(subject, { email, email_verified: account.email_verified ?? true, name: account.name ?? `Idp User ${subjects}` });
  return { subject, email };
}

const setCookies = (headers: Headers) => headers.getSetCookie();
const cookieValue = (headers: Headers, name: string) =>
  setCookies(headers).find((c) => c.startsWith(`${name}=`))?.split(';')[0]!.slice(name.length + 1);

/** GET /api/auth/idp: the provider URL it redirects to and the flow cookie it sets. */
async function start(query = '') {
  const response = await api.request('GET', `/api/auth/idp${query}`);
  expect(response.status).toBe(302);
  return { authorizationUrl: response.headers.get('location')!, flowCookie: cookieValue(response.headers, FLOW_COOKIE)!, response };
}

/** Follows the provider's redirect back to our callback, with the flow cookie the browser kept. */
async function callback(callbackUrl: URL, flowCookie: string | undefined) {
  const path = `${callbackUrl.pathname}${callbackUrl.search}`;
  const response = await api.request('GET', path, { headers: flowCookie === undefined ? {} : { cookie: `${FLOW_COOKIE}=${flowCookie}` } });
  expect(response.status).toBe(302);
  return { location: response.headers.get('location')!, headers: response.headers };
}

/** The whole browser sign-in as `subject`. */
async function signIn(subject: string, query = '') {
  const { authorizationUrl, flowCookie } = await start(query);
  const callbackUrl = await provider.signIn(authorizationUrl, subject);
  return { ...(await callback(callbackUrl, flowCookie)), callbackUrl, flowCookie };
}

function expectNoAuthCookies(headers: Headers) {
  expect(cookieValue(headers, 'access_token')).toBeUndefined();
  expect(cookieValue(headers, 'refresh_token')).toBeUndefined();
}

describe('starting a sign-in', () => {
  it('redirects to the provider with the code flow, PKCE S256, state and nonce, kept in a signed flow cookie', async () => {
    const { authorizationUrl, response } = await start();
    const url = new URL(authorizationUrl);
    expect(url.origin).toBe(provider.issuer);
    expect(url.searchParams.get('response_type')).toBe('code');
    expect(url.searchParams.get('client_id')).toBe(provider.clientId);
    expect(url.searchParams.get('redirect_uri')).toBe(`${server.config.publicUrl}/api/auth/idp/callback`);
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    expect(url.searchParams.get('code_challenge')).toMatch(/^[\w-]{43}$/);
    expect(url.searchParams.get('state')).toMatch(/^[\w-]{20,}$/);
    expect(url.searchParams.get('nonce')).toMatch(/^[\w-]{20,}$/);
    expect(url.searchParams.get('scope')).toBe('openid email profile');
    const flow = setCookies(response.headers).find((c) => c.startsWith(`${FLOW_COOKIE}=`))!;
    expect(flow).toMatch(/; Max-Age=600; Path=\/api\/auth\/idp; HttpOnly; SameSite=Lax$/);
    expect(flow).not.toContain(url.searchParams.get('state'));
  });

  it.each([
    ['https://127.0.0.1:4000/callback'],
    ['http://127.0.0.1/callback'],
    ['http://evil.example:4000/callback'],
    ['http://127.0.0.1.evil.example:4000/callback'],
    ['http://user@127.0.0.1:4000/callback'],
    ['not a url'],
  ])('refuses cliRedirect %s with 400 VALIDATION_FAILED', async (cliRedirect) => {
    const response = await api.request('GET', `/api/auth/idp?cliRedirect=${encodeURIComponent(cliRedirect)}`);
    expect(response.status).toBe(400);
    expect(response.body.code).toBe('VALIDATION_FAILED');
    expect(response.body.errors[0].field).toBe('cliRedirect');
    expect(setCookies(response.headers)).toEqual([]);
  });
});

describe('browser sign-in', () => {
  it('creates a passwordless account with a 1-day session, redeems its invitations, and finds it again by subject', async () => {
    const inviter = await api.register();
    const { subject, email } = providerAccount({ name: 'New Person' });
    const [project] = await server.sql<{ id: string }[]>`insert into projects (name) values ('Invited') returning id`;
    await server.sql`insert into project_members (project_id, user_id, role) values (${project!.id}, ${inviter.user.id}, 'ADMIN')`;
    await server.sql`
      insert into invitations (project_id, email, role, invited_by, token_hash, expires_at)
      values (${project!.id}, ${email}, 'MEMBER', ${inviter.user.id}, gen_random_uuid()::text, now() + interval '1 day')`;

    const { location, headers } = await signIn(subject);
    expect(location).toBe(TEST_APP_URL);
    expect(setCookies(headers).find((c) => c.startsWith('access_token='))).toMatch(/; Max-Age=900; Path=\/; HttpOnly; SameSite=Lax$/);
    const refreshCookie = setCookies(headers).find((c) => c.startsWith('refresh_token='))!;
    expect(refreshCookie).toMatch(/Path=\/api\/auth; HttpOnly; SameSite=Strict$/);
    expect(refreshCookie).not.toMatch(/Max-Age|Expires/);
    expect(setCookies(headers).find((c) => c.startsWith(`${FLOW_COOKIE}=`))).toMatch(/^idp_flow=; Max-Age=0; Path=\/api\/auth\/idp/);

    const me = await api.request('GET', '/api/auth/me', { token: cookieValue(headers, 'access_token') });
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ email, name: 'New Person', role: 'MEMBER' });
    const [user] = await server.sql`select password_hash from users where id = ${me.body.id}`;
    expect(user!.password_hash).toBeNull();
    const [session] = await server.sql`
      select remember_me, round(extract(epoch from expires_at - created_at)) as seconds from sessions
      where user_id = ${me.body.id}`;
    expect(session).toEqual({ remember_me: false, seconds: '86400' });
    const memberships = await server.sql`select role from project_members where user_id = ${me.body.id} and project_id = ${project!.id}`;
    expect(memberships).toEqual([{ role: 'MEMBER' }]);

    provider.accounts.set(subject, { email: 'changed-at-the-provider@idp.example.com', email_verified: true });
    const again = await signIn(subject);
    const meAgain = await api.request('GET', '/api/auth/me', { token: cookieValue(again.headers, 'access_token') });
    expect(meAgain.body.id).toBe(me.body.id);
  });

  it('lands a deactivated account with account_deactivated, and sets nothing', async () => {
    const { subject } = providerAccount();
    const me = await api.request('GET', '/api/auth/me', { token: cookieValue((await signIn(subject)).headers, 'access_token') });
    await server.sql`update users set deactivated_at = now() where id = ${me.body.id}`;
    const { location, headers } = await signIn(subject);
    expect(location).toBe(`${TEST_APP_URL}/?authError=account_deactivated`);
    expectNoAuthCookies(headers);
  });

  it('fails password login for an account created through the provider like a wrong password', async () => {
    const { subject, email } = providerAccount();
    await signIn(subject);
    const login = await api.request('POST', '/api/auth/login', { json: { email, password: 'any password at all' } });
    expect(login.status).toBe(401);
    expect(login.body.code).toBe('INVALID_CREDENTIALS');
  });

  it('never puts a provider sign-in into an existing account with its email (pre-hijacking): account_exists, nothing set', async () => {
    const attacker = await api.register({ email: `victim-${subjects}@corp.test` });
    const { subject } = providerAccount({ email: attacker.user.email.toUpperCase(), email_verified: true });
    const sessionsBefore = await server.sql`select id from sessions where user_id = ${attacker.user.id}`;

    const { location, headers } = await signIn(subject);
    expect(location).toBe(`${TEST_APP_URL}/?authError=account_exists`);
    expectNoAuthCookies(headers);
    expect(await server.sql`select 1 from identities where subject = ${subject}`).toEqual([]);
    expect(await server.sql`select id from sessions where user_id = ${attacker.user.id}`).toEqual(sessionsBefore);
    const login = await api.request('POST', '/api/auth/login', { json: { email: attacker.user.email, password: attacker.password } });
    expect(login.status).toBe(200);
  });

  it('answers account_exists for an unverified email of an existing account too', async () => {
    const existing = await api.register();
    const { subject } = providerAccount({ email: existing.user.email, email_verified: false });
    const { location, headers } = await signIn(subject);
    expect(location).toBe(`${TEST_APP_URL}/?authError=account_exists`);
    expectNoAuthCookies(headers);
    expect(await server.sql`select 1 from identities where subject = ${subject}`).toEqual([]);
  });

  it('creates an account for an unverified email without redeeming the invitations sent to it', async () => {
    const inviter = await api.register();
    const { subject, email } = providerAccount({ email_verified: false });
    const [project] = await server.sql<{ id: string }[]>`insert into projects (name) values ('Not for the unverified') returning id`;
    await server.sql`insert into project_members (project_id, user_id, role) values (${project!.id}, ${inviter.user.id}, 'ADMIN')`;
    await server.sql`
      insert into invitations (project_id, email, role, invited_by, token_hash, expires_at)
      values (${project!.id}, ${email}, 'ADMIN', ${inviter.user.id}, gen_random_uuid()::text, now() + interval '1 day')`;

    const { location, headers } = await signIn(subject);
    expect(location).toBe(TEST_APP_URL);
    const me = await api.request('GET', '/api/auth/me', { token: cookieValue(headers, 'access_token') });
    expect(me.body.email).toBe(email);
    expect(await server.sql`select 1 from project_members where user_id = ${me.body.id}`).toEqual([]);
    expect(await server.sql`select 1 from invitations where project_id = ${project!.id}`).toHaveLength(1);
  });

  it('creates an account for an unverified email nobody has yet', async () => {
    const { subject, email } = providerAccount({ email_verified: false });
    const { location } = await signIn(subject);
    expect(location).toBe(TEST_APP_URL);
    expect(await server.sql`select email from users where email = ${email}`).toHaveLength(1);
  });

  it('lands on a same-origin redirect path', async () => {
    const { subject } = providerAccount();
    const { location } = await signIn(subject, `?redirect=${encodeURIComponent('/projects/42?tab=files')}`);
    expect(location).toBe(`${TEST_APP_URL}/projects/42?tab=files`);
  });

  it.each([
    ['//evil.example/steal'],
    ['/\\evil.example/steal'],
    ['https://evil.example/steal'],
    ['http:evil.example'],
    ['/\t/evil.example'],
    ['evil.example'],
    ['javascript:alert(1)'],
  ])('ignores the open-redirect attempt %j and lands on APP_URL', async (redirect) => {
    const { subject } = providerAccount();
    const { location } = await signIn(subject, `?redirect=${encodeURIComponent(redirect)}`);
    expect(location).toBe(TEST_APP_URL);
  });
});

describe('explicit linking (?link=1)', () => {
  /** GET /api/auth/idp?link=1 as the browser of a signed-in user (its access_token cookie), through to the callback. */
  async function linkInBrowser(accessToken: string, subject: string, query = '') {
    const response = await api.request('GET', `/api/auth/idp?link=1${query}`, { headers: { cookie: `access_token=${accessToken}` } });
    expect(response.status).toBe(302);
    const callbackUrl = await provider.signIn(response.headers.get('location')!, subject);
    return callback(callbackUrl, cookieValue(response.headers, FLOW_COOKIE));
  }

  it('links the provider subject to the signed-in account whatever its email, keeps the caller as they were, and later sign-ins land there', async () => {
    const owner = await api.register();
    const { subject } = providerAccount({ email: 'someone-else-entirely@idp.example.com', email_verified: false });
    const { location, headers } = await linkInBrowser(owner.accessToken, subject, `&redirect=${encodeURIComponent('/settings')}`);
    expect(location).toBe(`${TEST_APP_URL}/settings`);
    expectNoAuthCookies(headers);
    expect(await server.sql`select user_id from identities where subject = ${subject}`).toEqual([{ user_id: owner.user.id }]);
    expect(await server.sql`select 1 from users where email = 'someone-else-entirely@idp.example.com'`).toEqual([]);
    expect((await api.request('GET', '/api/auth/me', { token: owner.accessToken })).status).toBe(200);

    const later = await signIn(subject);
    expect(later.location).toBe(TEST_APP_URL);
    const me = await api.request('GET', '/api/auth/me', { token: cookieValue(later.headers, 'access_token') });
    expect(me.body.id).toBe(owner.user.id);
  });

  it('links the account whose email the provider shares, which a plain sign-in refuses', async () => {
    const owner = await api.register();
    const { subject } = providerAccount({ email: owner.user.email, email_verified: true });
    expect((await signIn(subject)).location).toBe(`${TEST_APP_URL}/?authError=account_exists`);
    expect((await linkInBrowser(owner.accessToken, subject)).location).toBe(TEST_APP_URL);
    const me = await api.request('GET', '/api/auth/me', { token: cookieValue((await signIn(subject)).headers, 'access_token') });
    expect(me.body.id).toBe(owner.user.id);
  });

  it('refuses a subject already linked to another account with identity_in_use, and sets nothing', async () => {
    const { subject } = providerAccount();
    await signIn(subject);
    const other = await api.register();
    const { location, headers } = await linkInBrowser(other.accessToken, subject);
    expect(location).toBe(`${TEST_APP_URL}/?authError=identity_in_use`);
    expectNoAuthCookies(headers);
    expect(await server.sql`select user_id from identities where subject = ${subject} and user_id = ${other.user.id}`).toEqual([]);
  });

  it('answers link=1 without a signed-in caller with 401, and starts nothing', async () => {
    for (const headers of [{}, { cookie: 'access_token=not-a-token' }] as Record<string, string>[]) {
      const response = await api.request('GET', '/api/auth/idp?link=1', { headers });
      expect(response.status).toBe(401);
      expect(response.body.code).toBe('UNAUTHENTICATED');
      expect(setCookies(response.headers)).toEqual([]);
    }
  });

  describe('from the command line (a Bearer token)', () => {
    const cliRedirect = 'http://127.0.0.1:53682/callback';
    const codeVerifier = randomBytes(32).toString('base64url');
    const codeChallenge = createHash('sha256').update(codeVerifier).digest('base64url');
    const linkQuery = `?link=1&cliRedirect=${encodeURIComponent(cliRedirect)}&code_challenge=${codeChallenge}`;

    /** The hand-off address, opened in the browser, through the provider as `subject`: the loopback landing. */
    async function cliLink(accessToken: string, subject: string) {
      const started = await api.request('GET', `/api/auth/idp${linkQuery}`, { token: accessToken });
      expect(started.status).toBe(302);
      expect(setCookies(started.headers)).toEqual([]);
      const handOff = new URL(started.headers.get('location')!);
      expect(`${handOff.origin}${handOff.pathname}`).toBe(`${server.config.publicUrl}/api/auth/idp`);
      const inBrowser = await start(handOff.search);
      expect(new URL(inBrowser.authorizationUrl).origin).toBe(provider.issuer);
      const callbackUrl = await provider.signIn(inBrowser.authorizationUrl, subject);
      return callback(callbackUrl, inBrowser.flowCookie);
    }
    const redeem = (accessToken: string, json: Record<string, string>) =>
      api.request('POST', '/api/auth/idp/link', { token: accessToken, json: { redirectUri: cliRedirect, codeVerifier, ...json } });

    it('hands back an address for the browser; the link is made only when the command line redeems its code with verifier and token', async () => {
      const owner = await api.register();
      const { subject } = providerAccount({ email: 'cli-link-elsewhere@idp.example.com' });
      const { location, headers } = await cliLink(owner.accessToken, subject);
      expectNoAuthCookies(headers);
      const landing = new URL(location);
      expect(`${landing.origin}${landing.pathname}`).toBe(cliRedirect);
      const code = landing.searchParams.get('code')!;
      expect(await server.sql`select 1 from identities where subject = ${subject}`).toEqual([]);

      const linked = await redeem(owner.accessToken, { code });
      expect(linked.status).toBe(200);
      expect(linked.body).toEqual({ ok: true });
      expect(await server.sql`select user_id from identities where subject = ${subject}`).toEqual([{ user_id: owner.user.id }]);
      expect((await redeem(owner.accessToken, { code })).status).toBe(401);
      const later = await signIn(subject);
      expect((await api.request('GET', '/api/auth/me', { token: cookieValue(later.headers, 'access_token') })).body.id).toBe(owner.user.id);
    });

    it('links nothing for whoever else completes the address: the code is refused without the verifier, for another account, and as a sign-in', async () => {
      const owner = await api.register();
      const other = await api.register();
      for (const attempt of [
        (code: string) => redeem(owner.accessToken, { code, codeVerifier: randomBytes(32).toString('base64url') }),
        (code: string) => api.request('POST', '/api/auth/idp/link', { token: owner.accessToken, json: { code, redirectUri: cliRedirect } }),
        (code: string) => redeem(other.accessToken, { code }),
        (code: string) => api.request('POST', '/api/auth/idp/exchange', { json: { code, redirectUri: cliRedirect, codeVerifier } }),
      ]) {
        const { subject } = providerAccount();
        const code = new URL((await cliLink(owner.accessToken, subject)).location).searchParams.get('code')!;
        const refused = await attempt(code);
        expect(refused.status).toBe(401);
        expect(refused.body.code).toBe('INVALID_CREDENTIALS');
        expect((await redeem(owner.accessToken, { code })).status).toBe(401);
        expect(await server.sql`select 1 from identities where subject = ${subject}`).toEqual([]);
      }
    });

    it('answers identity_in_use at the loopback, and 409 IDENTITY_IN_USE when another account took the subject before the redeeming', async () => {
      const owner = await api.register();
      const { subject } = providerAccount();
      await signIn(subject);
      expect((await cliLink(owner.accessToken, subject)).location).toBe(`${cliRedirect}?authError=identity_in_use`);

      const free = providerAccount();
      const code = new URL((await cliLink(owner.accessToken, free.subject)).location).searchParams.get('code')!;
      await signIn(free.subject);
      const late = await redeem(owner.accessToken, { code });
      expect(late.status).toBe(409);
      expect(late.body.code).toBe('IDENTITY_IN_USE');
    });

    it('refuses a personal access token with 403 INSUFFICIENT_SCOPE at both steps, and in another letter case finds no route (404)', async () => {
      const owner = await api.register();
      const created = await api.request('POST', '/api/tokens', { token: owner.accessToken, json: { name: 'CI', scope: 'write', expiresIn: 3600 } });
      const personalToken: string = created.body.token;
      const { subject } = providerAccount();
      const code = new URL((await cliLink(owner.accessToken, subject)).location).searchParams.get('code')!;
      for (const [start, link, status, errorCode] of [
        ['/api/auth/idp', '/api/auth/idp/link', 403, 'INSUFFICIENT_SCOPE'],
        ['/API/AUTH/IDP', '/API/AUTH/IDP/LINK', 404, 'NOT_FOUND'],
      ] as const) {
        const started = await api.request('GET', `${start}${linkQuery}`, { token: personalToken });
        expect([started.status, started.body.code], start).toEqual([status, errorCode]);
        const redeemed = await api.request('POST', link, { token: personalToken, json: { code, redirectUri: cliRedirect, codeVerifier } });
        expect([redeemed.status, redeemed.body.code], link).toEqual([status, errorCode]);
      }
      expect(await server.sql`select 1 from identities where subject = ${subject}`).toEqual([]);
    });

    it('refuses a Bearer link without a loopback redirect and challenge, and POST /api/auth/idp/link without a token', async () => {
      const owner = await api.register();
      const bare = await api.request('GET', '/api/auth/idp?link=1', { token: owner.accessToken });
      expect(bare.status).toBe(400);
      expect(bare.body.errors[0].field).toBe('cliRedirect');
      const anonymous = await api.request('POST', '/api/auth/idp/link', { json: { code: 'x', redirectUri: cliRedirect, codeVerifier } });
      expect(anonymous.status).toBe(401);
      expect(anonymous.body.code).toBe('UNAUTHENTICATED');
    });

    it('resumes only a handed-off command-line link: a sign-in or browser-link flow planted through ?flow= is refused', async () => {
      const owner = await api.register();
      const signInFlow = (await start(`?cliRedirect=${encodeURIComponent(cliRedirect)}&code_challenge=${codeChallenge}`)).flowCookie;
      const browserLink = await api.request('GET', '/api/auth/idp?link=1', { headers: { cookie: `access_token=${owner.accessToken}` } });
      for (const planted of [signInFlow, cookieValue(browserLink.headers, FLOW_COOKIE)!]) {
        const response = await api.request('GET', `/api/auth/idp?flow=${encodeURIComponent(planted)}`);
        expect(response.status).toBe(302);
        expect(response.headers.get('location')).toBe(`${TEST_APP_URL}/?authError=invalid_state`);
        expect(setCookies(response.headers)).toEqual([]);
      }
    });
  });
});

describe('failed callbacks redirect with ?authError= and set no auth cookies', () => {
  it('a state that does not match the flow cookie', async () => {
    const { subject } = providerAccount();
    const { authorizationUrl, flowCookie } = await start();
    const callbackUrl = await provider.signIn(authorizationUrl, subject);
    callbackUrl.searchParams.set('state', 'attacker-chosen-state');
    const { location, headers } = await callback(callbackUrl, flowCookie);
    expect(location).toBe(`${TEST_APP_URL}/?authError=invalid_state`);
    expectNoAuthCookies(headers);
  });

  it('a flow cookie from another sign-in (login CSRF)', async () => {
    const { subject } = providerAccount();
    const attacker = await start();
    const callbackUrl = await provider.signIn(attacker.authorizationUrl, subject);
    const victim = await start();
    const { location, headers } = await callback(callbackUrl, victim.flowCookie);
    expect(location).toBe(`${TEST_APP_URL}/?authError=invalid_state`);
    expectNoAuthCookies(headers);
  });

  it('a tampered flow cookie', async () => {
    const { subject } = providerAccount();
    const { authorizationUrl, flowCookie } = await start();
    const callbackUrl = await provider.signIn(authorizationUrl, subject);
    const [payload, signature] = flowCookie.split('.');
    const flow = JSON.parse(Buffer.from(payload!, 'base64url').toString());
    const forged = `${Buffer.from(JSON.stringify({ ...flow, redirect: '/elsewhere' })).toString('base64url')}.${signature}`;
    const { location, headers } = await callback(callbackUrl, forged);
    expect(location).toBe(`${TEST_APP_URL}/?authError=invalid_state`);
    expectNoAuthCookies(headers);
  });

  it('a replayed authorization code', async () => {
    const { subject } = providerAccount();
    const first = await signIn(subject);
    expect(first.location).toBe(TEST_APP_URL);
    const { location, headers } = await callback(first.callbackUrl, first.flowCookie);
    expect(location).toBe(`${TEST_APP_URL}/?authError=exchange_failed`);
    expectNoAuthCookies(headers);
  });

  it('an expired flow cookie, or none at all', async () => {
    const { subject } = providerAccount();
    const { authorizationUrl, flowCookie } = await start();
    const callbackUrl = await provider.signIn(authorizationUrl, subject);
    const flow = JSON.parse(Buffer.from(flowCookie.split('.')[0]!, 'base64url').toString());
    const expired = sealFlow(server.config.jwtSecret!, { ...flow, expiresAt: Date.now() - 1000 });

    const late = await callback(callbackUrl, expired);
    expect(late.location).toBe(`${TEST_APP_URL}/?authError=expired_flow`);
    expectNoAuthCookies(late.headers);
    const dropped = await callback(callbackUrl, undefined);
    expect(dropped.location).toBe(`${TEST_APP_URL}/?authError=expired_flow`);
    expectNoAuthCookies(dropped.headers);
  });
});

describe('the provider', () => {
  it('sends a user who cancels at the provider back with ?authError=access_denied', async () => {
    const { authorizationUrl, flowCookie } = await start();
    const { location, headers } = await callback(await provider.cancel(authorizationUrl), flowCookie);
    expect(location).toBe(`${TEST_APP_URL}/?authError=access_denied`);
    expectNoAuthCookies(headers);
  });

  it('sends the user back with ?authError=provider_unavailable when the provider cannot be reached', async () => {
    const unreachable = await startTestServer({
      APP_URL: TEST_APP_URL,
      OIDC_ISSUER: 'http://127.0.0.1:9',
      OIDC_CLIENT_ID: 'bandcollab',
      OIDC_CLIENT_SECRET: 'secret',
    });
    try {
      const response = await client(unreachable.url).request('GET', '/api/auth/idp');
      expect(response.status).toBe(302);
      expect(response.headers.get('location')).toBe(`${TEST_APP_URL}/?authError=provider_unavailable`);
      expect(setCookies(response.headers)).toEqual([]);
    } finally {
      await unreachable.close();
    }
  });
});

describe('ID token validation', () => {
  it('refuses an ID token whose signature does not verify against the keys the provider publishes', async () => {
    const other = await startServerWithProvider();
    try {
      other.provider.publishWrongKeys();
      other.provider.accounts.set('someone', { email: 'someone@idp.example.com', email_verified: true });
      const start = await client(other.server.url).request('GET', '/api/auth/idp');
      const flowCookie = cookieValue(start.headers, FLOW_COOKIE)!;
      const callbackUrl = await other.provider.signIn(start.headers.get('location')!, 'someone');
      const response = await client(other.server.url).request('GET', `${callbackUrl.pathname}${callbackUrl.search}`, {
        headers: { cookie: `${FLOW_COOKIE}=${flowCookie}` },
      });
      expect(response.headers.get('location')).toBe(`${TEST_APP_URL}/?authError=exchange_failed`);
      expectNoAuthCookies(response.headers);
      expect(await other.server.sql`select 1 from users where email = 'someone@idp.example.com'`).toEqual([]);
    } finally {
      await other.server.close();
      await other.provider.close();
    }
  });
});

describe('command-line sign-in', () => {
  const cliRedirect = 'http://127.0.0.1:53682/callback';
  const codeVerifier = randomBytes(32).toString('base64url');
  const codeChallenge = createHash('sha256').update(codeVerifier).digest('base64url');

  async function cliSignIn(subject: string) {
    const { authorizationUrl, flowCookie } = await start(`?cliRedirect=${encodeURIComponent(cliRedirect)}&code_challenge=${codeChallenge}`);
    const callbackUrl = await provider.signIn(authorizationUrl, subject);
    return callback(callbackUrl, flowCookie);
  }
  const exchange = (json: Record<string, string>) => api.request('POST', '/api/auth/idp/exchange', { json });

  it('hands the loopback a one-time code, stored hashed, that the exchange with the verifier turns into a 1-day session once', async () => {
    const { subject, email } = providerAccount();
    const { location, headers } = await cliSignIn(subject);
    expectNoAuthCookies(headers);
    const landing = new URL(location);
    expect(`${landing.origin}${landing.pathname}`).toBe(cliRedirect);
    const code = landing.searchParams.get('code')!;
    expect(Buffer.from(code, 'base64url')).toHaveLength(32);
    expect(await server.sql`select 1 from cli_login_codes where code_hash = ${code}`).toEqual([]);

    const exchanged = await exchange({ code, redirectUri: cliRedirect, codeVerifier });
    expect(exchanged.status).toBe(200);
    expect(exchanged.body).toEqual({
      user: { id: expect.any(String), email, name: expect.any(String), role: 'MEMBER' },
      accessToken: expect.any(String),
      refreshToken: expect.any(String),
      expiresIn: 900,
    });
    expect(cookieValue(exchanged.headers, 'access_token')).toBe(exchanged.body.accessToken);
    const me = await api.request('GET', '/api/auth/me', { token: exchanged.body.accessToken });
    expect(me.body.email).toBe(email);

    const replayed = await exchange({ code, redirectUri: cliRedirect, codeVerifier });
    expect(replayed.status).toBe(401);
    expect(replayed.body.code).toBe('INVALID_CREDENTIALS');
  });

  it.each([
    ['without the verifier', {}],
    ['with a wrong verifier', { codeVerifier: randomBytes(32).toString('base64url') }],
    ['with the challenge instead of the verifier', { codeVerifier: codeChallenge }],
  ])('refuses a caught code %s, and burns it', async (_, verifier: Record<string, string>) => {
    const { subject } = providerAccount();
    const code = new URL((await cliSignIn(subject)).location).searchParams.get('code')!;
    const caught = await exchange({ code, redirectUri: cliRedirect, ...verifier });
    expect(caught.status).toBe(401);
    expect(caught.body.code).toBe('INVALID_CREDENTIALS');
    expectNoAuthCookies(caught.headers);
    const after = await exchange({ code, redirectUri: cliRedirect, codeVerifier });
    expect(after.status).toBe(401);
  });

  it.each([
    ['missing', ''],
    ['not an S256 challenge', '&code_challenge=short'],
  ])('refuses a command-line start whose code_challenge is %s with 400 VALIDATION_FAILED', async (_, query) => {
    const response = await api.request('GET', `/api/auth/idp?cliRedirect=${encodeURIComponent(cliRedirect)}${query}`);
    expect(response.status).toBe(400);
    expect(response.body.code).toBe('VALIDATION_FAILED');
    expect(response.body.errors[0].field).toBe('code_challenge');
    expect(setCookies(response.headers)).toEqual([]);
  });

  it('refuses a code sent with another redirect URI, and burns it', async () => {
    const { subject } = providerAccount();
    const code = new URL((await cliSignIn(subject)).location).searchParams.get('code')!;
    const elsewhere = await exchange({ code, redirectUri: 'http://127.0.0.1:9/callback', codeVerifier });
    expect(elsewhere.status).toBe(401);
    expect(elsewhere.body.code).toBe('INVALID_CREDENTIALS');
    const after = await exchange({ code, redirectUri: cliRedirect, codeVerifier });
    expect(after.status).toBe(401);
  });

  it('refuses an expired code and an unknown one', async () => {
    const { subject } = providerAccount();
    const code = new URL((await cliSignIn(subject)).location).searchParams.get('code')!;
    await server.sql`update cli_login_codes set expires_at = now() - interval '1 second' where used_at is null`;
    const expired = await exchange({ code, redirectUri: cliRedirect, codeVerifier });
    expect(expired.status).toBe(401);
    expect(expired.body.code).toBe('INVALID_CREDENTIALS');
    const unknown = await exchange({ code: 'made-up', redirectUri: cliRedirect, codeVerifier });
    expect(unknown.status).toBe(401);
    const missing = await exchange({ code, codeVerifier });
    expect(missing.status).toBe(400);
    expect(missing.body.code).toBe('VALIDATION_FAILED');
  });

  it('sends a failure back to the loopback with ?authError=', async () => {
    const existing = await api.register();
    const { subject } = providerAccount({ email: existing.user.email });
    const { location } = await cliSignIn(subject);
    expect(location).toBe(`${cliRedirect}?authError=account_exists`);
  });
});

describe('without OIDC settings', () => {
  it('answers every identity-provider route with 404 IDP_DISABLED', async () => {
    const plain = await startTestServer();
    try {
      const plainApi = client(plain.url);
      for (const [method, path, json] of [
        ['GET', '/api/auth/idp', undefined],
        ['GET', '/api/auth/idp?cliRedirect=http%3A%2F%2F127.0.0.1%3A4000%2F', undefined],
        ['GET', '/api/auth/idp?link=1', undefined],
        ['GET', '/api/auth/idp/callback?code=x&state=y', undefined],
        ['POST', '/api/auth/idp/exchange', { code: 'x', redirectUri: 'http://127.0.0.1:4000/', codeVerifier: 'x' }],
        ['POST', '/api/auth/idp/link', { code: 'x', redirectUri: 'http://127.0.0.1:4000/', codeVerifier: 'x' }],
      ] as const) {
        const response = await plainApi.request(method, path, { json });
        expect(response.status, path).toBe(404);
        expect(response.body.code).toBe('IDP_DISABLED');
      }
    } finally {
      await plain.close();
    }
  });
});
