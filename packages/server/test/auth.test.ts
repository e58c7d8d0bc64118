import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client } from './support/http.js';
import { startTestServer, type TestServer } from './support/server.js';

let server: TestServer;
let api: ReturnType<typeof client>;

beforeAll(async () => {
  // The cap on sessions logs one account in 51 times: over the default LOGIN_MAX_SUCCESSES (auth-limits.test.ts tests that limit).
  server = await startTestServer({ LOGIN_MAX_FAILURES: '10', LOGIN_MAX_SUCCESSES: '100' });
  api = client(server.url);
});
afterAll(() => server?.close());

const cookieHeaders = (headers: Headers) => headers.getSetCookie();
const cookieNamed = (headers: Headers, name: string) => cookieHeaders(headers).find((c) => c.startsWith(`${name}=`));
const b64url = (value: object | string) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');

describe('register', () => {
  it('makes the first account ADMIN, later ones MEMBER, lower-cases the email, sets session cookies', async () => {
    const first = await api.request('POST', '/api/auth/register', {
      json: { email: '  First@Example.COM ', password: 'password-1', name: '  First  ' },
    });
    expect(first.status).toBe(201);
    expect(first.headers.get('location')).toBe('/api/auth/me');
    expect(first.body.user).toEqual({ id: expect.any(String), email: 'first@example.com', name: 'First', role: 'ADMIN' });
    expect(first.body.expiresIn).toBe(900);
    expect(first.headers.get('cache-control')).toBe('no-store');
    expect(first.body.refreshToken.length).toBeGreaterThanOrEqual(43);
    expect(cookieNamed(first.headers, 'access_token')).toMatch(/^access_token=[^;]+; Max-Age=900; Path=\/; HttpOnly; SameSite=Lax$/);
    const refreshCookie = cookieNamed(first.headers, 'refresh_token')!;
    expect(refreshCookie).toMatch(/Path=\/api\/auth/);
    expect(refreshCookie).toMatch(/HttpOnly/);
    expect(refreshCookie).toMatch(/SameSite=Strict/);
    expect(refreshCookie).not.toMatch(/Max-Age|Expires/);
    expect(refreshCookie).not.toMatch(/Secure/);

    const second = await api.register();
    expect(second.user.role).toBe('MEMBER');
  });

  it('refuses a taken email case-insensitively with 409 EMAIL_TAKEN', async () => {
    await api.register({ email: 'taken@example.com' });
    const again = await api.request('POST', '/api/auth/register', {
      json: { email: 'TAKEN@example.com', password: 'password-1', name: 'Again' },
    });
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('EMAIL_TAKEN');
    expect(again.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  });

  it('answers two concurrent registrations of one email with one 201 and one 409', async () => {
    const json = { email: 'race@example.com', password: 'password-1', name: 'Race' };
    const results = await Promise.all([1, 2].map(() => api.request('POST', '/api/auth/register', { json })));
    expect(results.map((r) => r.status).sort()).toEqual([201, 409]);
  });

  it.each([
    [{ email: 'not-an-email', password: 'password-1', name: 'X' }, 'email'],
    [{ email: 'a@b.co', password: 'short', name: 'X' }, 'password'],
    [{ email: 'a@b.co', password: 'x'.repeat(1025), name: 'X' }, 'password'],
    [{ email: 'a@b.co', password: 'password-1', name: '   ' }, 'name'],
    [{ email: 'a@b.co', password: 'password-1', name: 'x'.repeat(201) }, 'name'],
    [{ email: 'a@b.co', password: 'password-1', name: 'bell\u0007' }, 'name'],
    [{ password: 'password-1', name: 'X' }, 'email'],
    [{ email: 42, password: 'password-1', name: 'X' }, 'email'],
  ])('rejects %j with 400 VALIDATION_FAILED on %s', async (json, field) => {
    const response = await api.request('POST', '/api/auth/register', { json });
    expect(response.status).toBe(400);
    expect(response.body.code).toBe('VALIDATION_FAILED');
    expect(response.body.errors.map((e: { field: string }) => e.field)).toContain(field);
  });
});

describe('errors', () => {
  it('answers malformed JSON with 400 INVALID_JSON', async () => {
    const response = await api.request('POST', '/api/auth/login', { body: '{"email":', headers: { 'content-type': 'application/json' } });
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ type: 'about:blank', title: 'Bad Request', status: 400, code: 'INVALID_JSON' });
    expect(response.body.requestId).toBe(response.headers.get('x-request-id'));
  });

  it('answers a JSON body over 1 MiB with 413 PAYLOAD_TOO_LARGE', async () => {
    const response = await api.request('POST', '/api/auth/login', {
      body: JSON.stringify({ email: 'a@b.co', password: 'x'.repeat(1024 * 1024) }),
      headers: { 'content-type': 'application/json' },
    });
    expect(response.status).toBe(413);
    expect(response.body.code).toBe('PAYLOAD_TOO_LARGE');
  });

  it('answers another content type with 415 UNSUPPORTED_MEDIA_TYPE', async () => {
    const response = await api.request('POST', '/api/auth/login', { body: 'email=a', headers: { 'content-type': 'text/plain' } });
    expect(response.status).toBe(415);
    expect(response.body.code).toBe('UNSUPPORTED_MEDIA_TYPE');
  });

  it('answers an unknown route with 404 problem details and echoes a sane request id', async () => {
    const response = await api.request('GET', '/api/nothing-here', { headers: { 'x-request-id': 'abc-123' } });
    expect(response.status).toBe(404);
    expect(response.body).toMatchObject({ code: 'NOT_FOUND', requestId: 'abc-123' });
    expect(response.headers.get('x-request-id')).toBe('abc-123');
    const insane = await api.request('GET', '/api/nothing-here', { headers: { 'x-request-id': 'has spaces <and> junk' } });
    expect(insane.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('login', () => {
  it('logs in case-insensitively; rememberMe gives a refresh cookie of about 30 days', async () => {
    const user = await api.register({ email: 'mixed@example.com' });
    const plain = await api.request('POST', '/api/auth/login', { json: { email: 'MIXED@example.com', password: user.password } });
    expect(plain.status).toBe(200);
    expect(plain.body.user.id).toBe(user.user.id);
    expect(cookieNamed(plain.headers, 'refresh_token')).not.toMatch(/Max-Age/);

    const remembered = await api.request('POST', '/api/auth/login', {
      json: { email: 'mixed@example.com', password: user.password, rememberMe: true },
    });
    const maxAge = Number(/Max-Age=(\d+)/.exec(cookieNamed(remembered.headers, 'refresh_token')!)![1]);
    expect(maxAge).toBeGreaterThan(30 * 86_400 - 60);
    expect(maxAge).toBeLessThanOrEqual(30 * 86_400);
  });

  it('gives a session 1 day, or 30 days with rememberMe, from login', async () => {
    const user = await api.register();
    const lifetime = async (rememberMe: boolean) => {
      const login = await api.request('POST', '/api/auth/login', { json: { email: user.user.email, password: user.password, rememberMe } });
      const [session] = await server.sql`select extract(epoch from expires_at - created_at)::int as seconds from sessions where id = (
        select session_id from refresh_tokens where token_hash = encode(sha256(${login.body.refreshToken}::bytea), 'hex'))`;
      return session!.seconds as number;
    };
    expect(await lifetime(false)).toBe(86_400);
    expect(await lifetime(true)).toBe(30 * 86_400);
  });

  it('answers unknown email and wrong password alike with 401 INVALID_CREDENTIALS', async () => {
    const user = await api.register();
    const wrong = await api.request('POST', '/api/auth/login', { json: { email: user.user.email, password: 'wrong-password' } });
    const unknown = await api.request('POST', '/api/auth/login', { json: { email: 'nobody@example.com', password: 'wrong-password' } });
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect(wrong.body.code).toBe('INVALID_CREDENTIALS');
    expect(wrong.body.detail).toBe(unknown.body.detail);
  });

  it('rate-limits the 11th failed login with 429 and Retry-After, even with the right password', async () => {
    const user = await api.register();
    for (let i = 0; i < 10; i++) {
      const failed = await api.request('POST', '/api/auth/login', { json: { email: user.user.email, password: 'wrong-password' } });
      expect(failed.status).toBe(401);
    }
    const limited = await api.request('POST', '/api/auth/login', { json: { email: user.user.email, password: user.password } });
    expect(limited.status).toBe(429);
    expect(limited.body.code).toBe('RATE_LIMITED');
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(900);
  });
});

describe('client address', () => {
  const failLogin = (target: ReturnType<typeof client>, email: string, forwardedFor: string) =>
    target.request('POST', '/api/auth/login', { json: { email, password: 'wrong-password' }, headers: { 'x-forwarded-for': forwardedFor } });

  it('ignores X-Forwarded-For without TRUST_PROXY', async () => {
    const user = await api.register();
    for (let i = 0; i < 10; i++) expect((await failLogin(api, user.user.email, `10.0.0.${i}`)).status).toBe(401);
    expect((await failLogin(api, user.user.email, '10.0.1.1')).status).toBe(429);
  });

  it('with TRUST_PROXY counts failures per the hop the proxy added, whatever the client put before it', async () => {
    const proxied = await startTestServer({ TRUST_PROXY: 'true', LOGIN_MAX_FAILURES: '2' });
    try {
      const proxiedApi = client(proxied.url);
      const user = await proxiedApi.register();
      expect((await failLogin(proxiedApi, user.user.email, 'spoofed-1, 203.0.113.7')).status).toBe(401);
      expect((await failLogin(proxiedApi, user.user.email, 'spoofed-2, 203.0.113.7')).status).toBe(401);
      expect((await failLogin(proxiedApi, user.user.email, 'spoofed-3, 203.0.113.7')).status).toBe(429);
      expect((await failLogin(proxiedApi, user.user.email, '203.0.113.8')).status).toBe(401);
    } finally {
      await proxied.close();
    }
  });
});

describe('access tokens', () => {
  it('serves /api/auth/me with the bearer token', async () => {
    const user = await api.register({ name: 'Me Myself' });
    const me = await api.request('GET', '/api/auth/me', { token: user.accessToken });
    expect(me.status).toBe(200);
    expect(me.body).toEqual({
      id: user.user.id,
      email: user.user.email,
      name: 'Me Myself',
      role: 'MEMBER',
      avatarUrl: null,
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
  });

  it('answers no token with 401 UNAUTHENTICATED and WWW-Authenticate: Bearer', async () => {
    const response = await api.request('GET', '/api/auth/me');
    expect(response.status).toBe(401);
    expect(response.body.code).toBe('UNAUTHENTICATED');
    expect(response.headers.get('www-authenticate')).toMatch(/^Bearer/);
  });

  it('rejects tampered, alg:none and wrongly-signed tokens with UNAUTHENTICATED', async () => {
    const user = await api.register();
    const [header, payload, signature] = user.accessToken.split('.') as [string, string, string];
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
    const tampered = `${header}.${b64url({ ...claims, sub: '00000000-0000-4000-8000-000000000000' })}.${signature}`;
    const none = `${b64url({ alg: 'none', typ: 'JWT' })}.${payload}.`;
    const unsigned = `${header}.${payload}.${createHmac('sha256', 'another-secret').update(`${header}.${payload}`).digest('base64url')}`;
    for (const token of [tampered, none, unsigned, 'garbage']) {
      const response = await api.request('GET', '/api/auth/me', { token });
      expect(response.status, token).toBe(401);
      expect(response.body.code).toBe('UNAUTHENTICATED');
    }
  });

  it('rejects a token signed with the right secret but another algorithm (HS512)', async () => {
    const user = await api.register();
    const [, payload] = user.accessToken.split('.') as [string, string];
    const header = b64url({ alg: 'HS512', typ: 'JWT' });
    const signature = createHmac('sha512', server.config.jwtSecret!).update(`${header}.${payload}`).digest('base64url');
    const response = await api.request('GET', '/api/auth/me', { token: `${header}.${payload}.${signature}` });
    expect(response.status).toBe(401);
    expect(response.body.code).toBe('UNAUTHENTICATED');
  });

  it('answers an expired access token with 401 TOKEN_EXPIRED', async () => {
    // A lifetime the real clock cannot run out on a busy machine; the test clock moves past it.
    const shortLived = await startTestServer({ ACCESS_TOKEN_TTL_SECONDS: '60' });
    try {
      const shortApi = client(shortLived.url);
      const user = await shortApi.register();
      expect(user.expiresIn).toBe(60);
      const fresh = await shortApi.request('GET', '/api/auth/me', { token: user.accessToken });
      expect(fresh.status).toBe(200);
      shortLived.clock.advance(61);
      const response = await shortApi.request('GET', '/api/auth/me', { token: user.accessToken });
      expect(response.status).toBe(401);
      expect(response.body.code).toBe('TOKEN_EXPIRED');
    } finally {
      await shortLived.close();
    }
  });
});

describe('refresh and logout', () => {
  it('rotates the pair and keeps the session expiry', async () => {
    const user = await api.register();
    const login = await api.request('POST', '/api/auth/login', { json: { email: user.user.email, password: user.password, rememberMe: true } });
    const [before] = await server.sql`select expires_at from sessions where id = (
      select session_id from refresh_tokens where token_hash = encode(sha256(${login.body.refreshToken}::bytea), 'hex'))`;
    server.clock.advance(1);
    const refreshed = await api.request('POST', '/api/auth/refresh', { json: { refreshToken: login.body.refreshToken } });
    expect(refreshed.status).toBe(200);
    expect(Object.keys(refreshed.body).sort()).toEqual(['accessToken', 'expiresIn', 'refreshToken']);
    expect(login.headers.get('cache-control')).toBe('no-store');
    expect(refreshed.headers.get('cache-control')).toBe('no-store');
    expect(refreshed.body.refreshToken).not.toBe(login.body.refreshToken);
    const [after] = await server.sql`select expires_at from sessions where id = (
      select session_id from refresh_tokens where token_hash = encode(sha256(${refreshed.body.refreshToken}::bytea), 'hex'))`;
    expect(after!.expires_at.getTime()).toBe(before!.expires_at.getTime());
    const maxAge = Number(/Max-Age=(\d+)/.exec(cookieNamed(refreshed.headers, 'refresh_token')!)![1]);
    expect(maxAge).toBeLessThan(30 * 86_400);
    expect(maxAge).toBeGreaterThan(30 * 86_400 - 60);
    const me = await api.request('GET', '/api/auth/me', { token: refreshed.body.accessToken });
    expect(me.status).toBe(200);
  });

  it('keeps a session cookie a session cookie across refresh, and takes the token from the cookie', async () => {
    const user = await api.register();
    const refreshed = await api.request('POST', '/api/auth/refresh', { headers: { cookie: `refresh_token=${user.refreshToken}` } });
    expect(refreshed.status).toBe(200);
    expect(cookieNamed(refreshed.headers, 'refresh_token')).not.toMatch(/Max-Age|Expires/);
  });

  it('revokes the whole session when a rotated refresh token is presented again', async () => {
    const user = await api.register();
    const first = await api.request('POST', '/api/auth/refresh', { json: { refreshToken: user.refreshToken } });
    expect(first.status).toBe(200);
    const replay = await api.request('POST', '/api/auth/refresh', { json: { refreshToken: user.refreshToken } });
    expect(replay.status).toBe(401);
    expect(replay.body.code).toBe('INVALID_REFRESH_TOKEN');
    const newest = await api.request('POST', '/api/auth/refresh', { json: { refreshToken: first.body.refreshToken } });
    expect(newest.status).toBe(401);
    const me = await api.request('GET', '/api/auth/me', { token: first.body.accessToken });
    expect(me.status).toBe(401);
  });

  it('answers an unknown or missing refresh token with 401 INVALID_REFRESH_TOKEN', async () => {
    for (const json of [{ refreshToken: 'nope' }, {}]) {
      const response = await api.request('POST', '/api/auth/refresh', { json });
      expect(response.status).toBe(401);
      expect(response.body.code).toBe('INVALID_REFRESH_TOKEN');
    }
  });

  it('logout stops the refresh token and the access tokens at once, and clears both cookies', async () => {
    const user = await api.register();
    const logout = await api.request('POST', '/api/auth/logout', { json: { refreshToken: user.refreshToken } });
    expect(logout.status).toBe(200);
    expect(logout.body).toEqual({ ok: true });
    expect(cookieNamed(logout.headers, 'access_token')).toMatch(/^access_token=; Max-Age=0; Path=\//);
    expect(cookieNamed(logout.headers, 'refresh_token')).toMatch(/^refresh_token=; Max-Age=0; Path=\/api\/auth/);
    expect((await api.request('GET', '/api/auth/me', { token: user.accessToken })).status).toBe(401);
    const refresh = await api.request('POST', '/api/auth/refresh', { json: { refreshToken: user.refreshToken } });
    expect(refresh.status).toBe(401);
  });

  it('logout by bearer token ends that session; logout with nothing active still answers 200', async () => {
    const user = await api.register();
    const logout = await api.request('POST', '/api/auth/logout', { token: user.accessToken });
    expect(logout.status).toBe(200);
    expect((await api.request('GET', '/api/auth/me', { token: user.accessToken })).status).toBe(401);
    expect((await api.request('POST', '/api/auth/logout')).status).toBe(200);
  });
});

describe('operations', () => {
  it('reports health', async () => {
    const health = await api.request('GET', '/api/health');
    expect(health.status).toBe(200);
    expect(health.body).toEqual({ status: 'ok', db: 'ok', version: expect.any(String) });
  });
});

describe('secure cookies', () => {
  it('marks both cookies Secure when PUBLIC_URL is https, or with COOKIE_SECURE=true', async () => {
    const settings: Record<string, string>[] = [{ PUBLIC_URL: 'https://band.example.com' }, { COOKIE_SECURE: 'true' }];
    for (const env of settings) {
      const secureServer = await startTestServer(env);
      try {
        const registered = await client(secureServer.url).request('POST', '/api/auth/register', {
          json: { email: 'secure@example.com', password: 'password-1', name: 'Secure' },
        });
        expect(registered.status).toBe(201);
        for (const name of ['access_token', 'refresh_token']) expect(cookieNamed(registered.headers, name), JSON.stringify(env)).toMatch(/; Secure(;|$)/);
        const loggedOut = await client(secureServer.url).request('POST', '/api/auth/logout', { token: registered.body.accessToken });
        for (const name of ['access_token', 'refresh_token']) expect(cookieNamed(loggedOut.headers, name)).toMatch(/; Secure(;|$)/);
      } finally {
        await secureServer.close();
      }
    }
  });
});

describe('CORS', () => {
  it('allows only the configured origins, with credentials', async () => {
    const corsServer = await startTestServer({ CORS_ORIGINS: 'https://app.example.com' });
    try {
      const corsApi = client(corsServer.url);
      const preflight = await corsApi.request('OPTIONS', '/api/auth/login', {
        headers: { origin: 'https://app.example.com', 'access-control-request-method': 'POST' },
      });
      expect(preflight.status).toBe(204);
      expect(preflight.headers.get('access-control-allow-origin')).toBe('https://app.example.com');
      expect(preflight.headers.get('access-control-allow-credentials')).toBe('true');
      const foreign = await corsApi.request('GET', '/api/health', { headers: { origin: 'https://evil.example.com' } });
      expect(foreign.headers.get('access-control-allow-origin')).toBeNull();
      // API §17: a browser may send Idempotency-Key, and reads exactly these headers of an answer.
      const keyed = await corsApi.request('OPTIONS', '/api/projects', {
        headers: { origin: 'https://app.example.com', 'access-control-request-method': 'POST', 'access-control-request-headers': 'idempotency-key,content-type' },
      });
      expect(keyed.headers.get('access-control-allow-headers')?.split(/,\s*/)).toContain('idempotency-key');
      const answer = await corsApi.request('GET', '/api/health', { headers: { origin: 'https://app.example.com' } });
      expect(answer.headers.get('access-control-expose-headers')?.split(/,\s*/).sort()).toEqual(
        [
          'x-request-id',
          'retry-after',
          'etag',
          'location',
          'content-disposition',
          'content-range',
          'idempotent-replayed',
          'band-file-id',
          'tus-resumable',
          'tus-version',
          'tus-max-size',
          'tus-extension',
          'upload-offset',
          'upload-length',
          'upload-metadata',
          'upload-expires',
        ].sort(),
      );
    } finally {
      await corsServer.close();
    }
  });
});

describe('the cap on sessions', () => {
  it('keeps the 50 newest sessions of a user: the 51st login ends the oldest, its access and refresh tokens at once', async () => {
    const user = await api.register();
    const login = () => api.request('POST', '/api/auth/login', { json: { email: user.user.email, password: user.password } });
    const sessions = [user];
    for (let i = 1; i < 50; i++) {
      const next = await login();
      expect(next.status).toBe(200);
      sessions.push({ ...user, ...next.body });
    }
    const me = (accessToken: string) => api.request('GET', '/api/auth/me', { token: accessToken });
    expect((await me(sessions[0]!.accessToken)).status).toBe(200);

    const fiftyFirst = await login();
    expect(fiftyFirst.status).toBe(200);
    expect((await me(sessions[0]!.accessToken)).status).toBe(401);
    expect((await api.request('POST', '/api/auth/refresh', { json: { refreshToken: sessions[0]!.refreshToken } })).status).toBe(401);
    expect((await me(sessions[1]!.accessToken)).status).toBe(200);
    expect((await me(fiftyFirst.body.accessToken)).status).toBe(200);
    const [active] = await server.sql<{ count: number }[]>`
      select count(*)::int as count from sessions where user_id = ${user.user.id} and revoked_at is null`;
    expect(active!.count).toBe(50);
  });
});

describe('cookie mode (API §17)', () => {
  it("takes the access_token cookie on API routes from the server's own page or a trusted origin, never from another page", async () => {
    const user = await api.register();
    const cookie = `access_token=${user.accessToken}`;
    const ownOrigin = new URL(server.config.publicUrl).origin;
    const me = (headers: Record<string, string>) => api.request('GET', '/api/auth/me', { headers: { cookie, ...headers } });
    expect((await me({ 'sec-fetch-site': 'same-origin' })).status).toBe(200);
    expect((await me({ origin: ownOrigin })).status).toBe(200);
    const foreign: Record<string, string>[] = [{}, { origin: 'https://evil.example.com' }, { 'sec-fetch-site': 'same-site' }, { 'sec-fetch-site': 'cross-site' }, { origin: 'null' }];
    for (const headers of foreign) {
      expect((await me(headers)).status, JSON.stringify(headers)).toBe(401);
    }
    const created = await api.request('POST', '/api/projects', { headers: { cookie, origin: ownOrigin }, json: { name: 'From the page' } });
    expect(created.status).toBe(201);
    expect((await api.request('POST', '/api/projects', { headers: { cookie, origin: 'https://evil.example.com' }, json: { name: 'Forged' } })).status).toBe(401);
  });
});
