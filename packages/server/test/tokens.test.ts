import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMember, expectStatus, seedProject } from './authz/fixture.js';
import { openEventSocket } from './support/event-socket.js';
import { client } from './support/http.js';
import { startTestServer, type TestServer } from './support/server.js';

let server: TestServer;
let api: ReturnType<typeof client>;

beforeAll(async () => {
  server = await startTestServer();
  api = client(server.url);
});
afterAll(() => server?.close());

type Session = Awaited<ReturnType<typeof api.register>>;

const DAY = 86_400;

async function createToken(owner: Session, body: Record<string, unknown> = {}) {
  return expectStatus(
    api.request('POST', '/api/tokens', { token: owner.accessToken, json: { name: 'CI', scope: 'write', expiresIn: 90 * DAY, ...body } }),
    201,
  );
}

describe('POST /api/tokens, GET /api/tokens, GET and DELETE /api/tokens/:id', () => {
  it('creates a token shown once, lists it without the secret, newest first, and revokes it at once', async () => {
    const owner = await api.register();
    const before = Date.now();
    const created = await api.request('POST', '/api/tokens', {
      token: owner.accessToken,
      json: { name: '  Release job ', scope: 'read', expiresIn: 3600 },
    });
    expect(created.status).toBe(201);
    const { token, ...record } = created.body;
    expect(created.headers.get('location')).toBe(`/api/tokens/${record.id}`);
    expect(token).toMatch(/^bcp_[0-9A-Za-z]{36}$/);
    expect(record).toEqual({
      id: expect.any(String),
      name: 'Release job',
      scope: 'read',
      projectIds: null,
      tokenHint: `bcp_${token.slice(-4)}`,
      createdAt: expect.any(String),
      expiresAt: expect.any(String),
      lastUsedAt: null,
    });
    const expiresIn = Date.parse(record.expiresAt) - before;
    expect(expiresIn).toBeGreaterThan(3590_000);
    const [stored] = await server.sql`select token_hash from personal_access_tokens where id = ${record.id}`;
    expect(stored!.token_hash).not.toContain(token);
    expect(stored!.token_hash).toMatch(/^[0-9a-f]{64}$/);

    const second = await createToken(owner);
    const listed = await expectStatus(api.request('GET', '/api/tokens', { token: owner.accessToken }), 200);
    expect(listed.map((t: { id: string }) => t.id)).toEqual([second.id, record.id]);
    expect(JSON.stringify(listed)).not.toContain(token.slice(4, 34));
    expect(await expectStatus(api.request('GET', `/api/tokens/${record.id}`, { token: owner.accessToken }), 200)).toEqual(record);

    expect((await api.request('GET', '/api/auth/me', { token })).status).toBe(200);
    expect((await api.request('DELETE', `/api/tokens/${record.id}`, { token: owner.accessToken })).body).toEqual({ id: record.id, deleted: true });
    const revoked = await api.request('GET', '/api/auth/me', { token });
    expect(revoked.status).toBe(401);
    expect(revoked.body.code).toBe('UNAUTHENTICATED');
    expect(revoked.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect((await api.request('DELETE', `/api/tokens/${record.id}`, { token: owner.accessToken })).status).toBe(404);
    expect((await api.request('GET', `/api/tokens/${record.id}`, { token: owner.accessToken })).status).toBe(404);
  });

  it("refuses to show or revoke another user's token (404)", async () => {
    const [owner, other] = [await api.register(), await api.register()];
    const { id, token } = await createToken(owner);
    expect((await api.request('GET', `/api/tokens/${id}`, { token: other.accessToken })).body.code).toBe('NOT_FOUND');
    expect((await api.request('DELETE', `/api/tokens/${id}`, { token: other.accessToken })).status).toBe(404);
    expect((await api.request('GET', '/api/auth/me', { token })).status).toBe(200);
  });

  it('requires an expiry between an hour and 366 days, a scope, and projects the caller belongs to', async () => {
    const owner = await api.register();
    const stranger = await api.register();
    const foreign = await seedProject(api, stranger.accessToken);
    const invalid = async (body: Record<string, unknown>, field: string) => {
      const answer = await api.request('POST', '/api/tokens', { token: owner.accessToken, json: { name: 'CI', scope: 'write', expiresIn: 3600, ...body } });
      expect(answer.status, JSON.stringify(body)).toBe(400);
      expect(answer.body.errors.map((e: { field: string }) => e.field)).toContain(field);
    };
    await invalid({ expiresIn: undefined }, 'expiresIn');
    await invalid({ expiresIn: 3599 }, 'expiresIn');
    await invalid({ expiresIn: 31_622_401 }, 'expiresIn');
    await invalid({ scope: 'admin' }, 'scope');
    await invalid({ projectIds: [] }, 'projectIds');
    await invalid({ name: '' }, 'name');
    await createToken(owner, { expiresIn: 31_622_400 });
    const notMine = await api.request('POST', '/api/tokens', {
      token: owner.accessToken,
      json: { name: 'CI', scope: 'write', expiresIn: 3600, projectIds: [foreign.id] },
    });
    expect(notMine.status).toBe(404);
  });

  it('refuses an expired token with 401 UNAUTHENTICATED (tokens are not refreshed)', async () => {
    const owner = await api.register();
    const { id, token } = await createToken(owner);
    await server.sql`update personal_access_tokens set expires_at = now() - interval '1 second' where id = ${id}`;
    const answer = await api.request('GET', '/api/projects', { token });
    expect(answer.status).toBe(401);
    expect(answer.body.code).toBe('UNAUTHENTICATED');
    expect(await expectStatus(api.request('GET', '/api/tokens', { token: owner.accessToken }), 200)).toEqual([]);
  });
});

describe('authenticating with a token', () => {
  it('refuses a malformed token or a failed checksum without a database lookup', async () => {
    const owner = await api.register();
    const { token } = await createToken(owner);
    const oneCharacterOff = token.slice(0, 10) + (token[10] === 'a' ? 'b' : 'a') + token.slice(11);
    // While the token table is locked, any lookup waits: a refusal that arrives anyway made none.
    let release = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    let holding: Promise<unknown> = Promise.resolve();
    await new Promise<void>((locked) => {
      holding = server.sql.begin(async (tx) => {
        await tx`lock table personal_access_tokens in access exclusive mode`;
        locked();
        await released;
      });
    });
    let lookedUp = false;
    const wellFormed = api.request('GET', '/api/auth/me', { token }).then((answer) => {
      lookedUp = true;
      return answer;
    });
    try {
      for (const bad of [oneCharacterOff, 'bcp_short', `${token}x`, `bcp_${'!'.repeat(36)}`]) {
        const answer = await api.request('GET', '/api/projects', { token: bad });
        expect(answer.status, bad).toBe(401);
        expect(answer.body.code).toBe('UNAUTHENTICATED');
      }
      expect(lookedUp).toBe(false);
    } finally {
      release();
      await holding;
    }
    expect((await wellFormed).status).toBe(200);
  });

  it("acts as its owner: GET /api/auth/me answers the owner, and the token's scope, expiry and projects in headers", async () => {
    const owner = await api.register({ name: 'Token Owner' });
    const project = await seedProject(api, owner.accessToken);
    const { token, expiresAt } = await createToken(owner, { scope: 'read' });
    const me = await api.request('GET', '/api/auth/me', { token });
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ id: owner.user.id, name: 'Token Owner' });
    expect(me.headers.get('band-token-scope')).toBe('read');
    expect(me.headers.get('band-token-expires')).toBe(expiresAt);
    expect(me.headers.get('band-token-projects')).toBeNull();
    const limited = await createToken(owner, { projectIds: [project.id] });
    const limitedMe = await api.request('GET', '/api/auth/me', { token: limited.token });
    expect(limitedMe.headers.get('band-token-scope')).toBe('write');
    expect(limitedMe.headers.get('band-token-projects')).toBe(project.id);
    const bySession = await api.request('GET', '/api/auth/me', { token: owner.accessToken });
    expect(bySession.headers.get('band-token-scope')).toBeNull();
  });

  it('is refused on /api/auth/* (except GET me) and /api/tokens with 403 INSUFFICIENT_SCOPE', async () => {
    const owner = await api.register();
    const { token, id } = await createToken(owner);
    for (const [method, path, json] of [
      ['POST', '/api/tokens', { name: 'Minted', scope: 'write', expiresIn: 3600 }],
      ['GET', '/api/tokens', undefined],
      ['DELETE', `/api/tokens/${id}`, undefined],
      ['POST', '/api/auth/logout', {}],
      ['POST', '/api/auth/login', { email: owner.user.email, password: owner.password }],
      ['POST', '/api/auth/refresh', { refreshToken: owner.refreshToken }],
      ['PUT', '/api/auth/me', { name: 'Changed' }],
    ] as const) {
      const answer = await api.request(method, path, { token, ...(json === undefined ? {} : { json }) });
      expect(answer.status, `${method} ${path}`).toBe(403);
      expect(answer.body.code).toBe('INSUFFICIENT_SCOPE');
    }
    expect((await api.request('GET', '/api/auth/me', { token })).status).toBe(200);
  });

  it('cannot reach a session-only route through another spelling of its path: another letter case is 404', async () => {
    const owner = await api.register();
    const project = await seedProject(api, owner.accessToken);
    const limited = await createToken(owner, { projectIds: [project.id] });
    const others = await createToken(owner);
    const attempts = [
      ['POST', '/API/TOKENS', { name: 'Minted', scope: 'write', expiresIn: 366 * DAY }],
      ['GET', '/Api/Tokens', undefined],
      ['DELETE', `/Api/Tokens/${others.id}`, undefined],
      ['PUT', '/Api/auth/me', { name: 'Changed' }],
    ] as const;
    for (const [method, path, json] of attempts) {
      const answer = await api.request(method, path, { token: limited.token, ...(json === undefined ? {} : { json }) });
      expect(answer.status, `${method} ${path}: ${answer.text}`).toBe(404);
      expect(answer.body.code).toBe('NOT_FOUND');
    }
    const tokens = await server.sql`select id from personal_access_tokens where user_id = ${owner.user.id} order by created_at`;
    expect(tokens.map((row) => row.id)).toEqual([limited.id, others.id]);
    const [user] = await server.sql`select name from users where id = ${owner.user.id}`;
    expect(user!.name).toBe(owner.user.name);
  });

  it('read: GET and HEAD only, anything else 403 INSUFFICIENT_SCOPE', async () => {
    const owner = await api.register();
    const project = await seedProject(api, owner.accessToken);
    const { token } = await createToken(owner, { scope: 'read' });
    expect((await api.request('GET', `/api/projects/${project.id}`, { token })).status).toBe(200);
    expect((await api.request('HEAD', `/api/projects/${project.id}`, { token })).status).toBe(200);
    const refused = await api.request('PUT', `/api/cuts/${project.cutId}`, { token, json: { name: 'Renamed' } });
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe('INSUFFICIENT_SCOPE');
    const [cut] = await server.sql`select name from cuts where id = ${project.cutId}`;
    expect(cut!.name).toBe('Cut');
  });

  it('limited to projects: others are absent from lists and 404, and it cannot create projects', async () => {
    const owner = await api.register();
    const [reached, other] = [await seedProject(api, owner.accessToken, 'Reached'), await seedProject(api, owner.accessToken, 'Other')];
    const { token } = await createToken(owner, { projectIds: [reached.id] });
    const listed = await expectStatus(api.request('GET', '/api/projects', { token }), 200);
    expect(listed.map((p: { id: string }) => p.id)).toEqual([reached.id]);
    expect((await api.request('GET', `/api/projects/${other.id}`, { token })).status).toBe(404);
    expect((await api.request('GET', `/api/cuts/${other.cutId}`, { token })).status).toBe(404);
    expect((await api.request('POST', `/api/vibes/${other.vibeId}/cuts`, { token, json: { name: 'Nope' } })).status).toBe(404);
    expect((await api.request('POST', `/api/vibes/${reached.vibeId}/cuts`, { token, json: { name: 'Yes' } })).status).toBe(201);
    const create = await api.request('POST', '/api/projects', { token, json: { name: 'New' } });
    expect(create.status).toBe(403);
    expect(create.body.code).toBe('INSUFFICIENT_SCOPE');
  });

  it("names itself in the actor of the events its actions cause (actor.token); a session's actions carry no token", async () => {
    const owner = await api.register();
    const project = await seedProject(api, owner.accessToken, 'Released');
    const { token } = await createToken(owner, { name: 'github-release' });
    const events = await openEventSocket(server.url, { token: owner.accessToken });
    try {
      await expectStatus(api.request('PUT', `/api/cuts/${project.cutId}`, { token, json: { name: 'By the token' } }), 200);
      await expectStatus(api.request('PUT', `/api/cuts/${project.cutId}`, { token: owner.accessToken, json: { name: 'By hand' } }), 200);
      const [byToken, byHand] = [
        await events.waitFor((event) => event.type === 'cut.updated' && event.data.cut.name === 'By the token'),
        await events.waitFor((event) => event.type === 'cut.updated' && event.data.cut.name === 'By hand'),
      ];
      expect(byToken.actor).toEqual({ id: owner.user.id, name: owner.user.name, token: 'github-release' });
      expect(byHand.actor).toEqual({ id: owner.user.id, name: owner.user.name });
    } finally {
      events.close();
    }
  });

  it('limited to projects: the events stream says hello with and delivers only those', async () => {
    const owner = await api.register();
    const [reached, other] = [await seedProject(api, owner.accessToken, 'Reached'), await seedProject(api, owner.accessToken, 'Other')];
    const { token } = await createToken(owner, { scope: 'read', projectIds: [reached.id] });
    const events = await openEventSocket(server.url, { token });
    try {
      expect(events.hello.projectIds).toEqual([reached.id]);
      await expectStatus(api.request('PUT', `/api/cuts/${other.cutId}`, { token: owner.accessToken, json: { name: 'Hidden' } }), 200);
      await expectStatus(api.request('PUT', `/api/cuts/${reached.cutId}`, { token: owner.accessToken, json: { name: 'Seen' } }), 200);
      await events.waitFor((event) => event.type === 'cut.updated' && event.projectId === reached.id);
      // A project the owner creates later is outside the token too.
      await seedProject(api, owner.accessToken, 'Later');
      await expectStatus(api.request('PUT', `/api/cuts/${reached.cutId}`, { token: owner.accessToken, json: { name: 'Seen again' } }), 200);
      await events.waitFor((event) => event.type === 'cut.updated' && event.data.cut.name === 'Seen again');
      expect(events.events.every((event) => event.projectId === reached.id)).toBe(true);
    } finally {
      events.close();
    }
  });

  it('a revoked token closes its event sockets (4401)', async () => {
    const owner = await api.register();
    const { id, token } = await createToken(owner, { scope: 'read' });
    const events = await openEventSocket(server.url, { token });
    await expectStatus(api.request('DELETE', `/api/tokens/${id}`, { token: owner.accessToken }), 200);
    expect((await events.closed).code).toBe(4401);
  });

  it('never grants more than the owner has now: an owner who leaves a project takes the token out too', async () => {
    const [admin, owner] = [await api.register(), await api.register()];
    const project = await seedProject(api, admin.accessToken);
    await addMember(api, admin.accessToken, project.id, owner);
    const { token } = await createToken(owner, { projectIds: [project.id] });
    expect((await api.request('GET', `/api/projects/${project.id}`, { token })).status).toBe(200);
    await expectStatus(api.request('DELETE', `/api/projects/${project.id}/members/${owner.user.id}`, { token: admin.accessToken }), 200);
    expect((await api.request('GET', `/api/projects/${project.id}`, { token })).status).toBe(404);
    expect(await expectStatus(api.request('GET', '/api/projects', { token }), 200)).toEqual([]);
  });

  it('writes lastUsedAt at most once a minute', async () => {
    const owner = await api.register();
    const { id, token } = await createToken(owner);
    const lastUsed = async () => (await server.sql`select last_used_at from personal_access_tokens where id = ${id}`)[0]!.last_used_at as Date | null;
    expect(await lastUsed()).toBeNull();
    await expectStatus(api.request('GET', '/api/projects', { token }), 200);
    const first = await lastUsed();
    expect(first).toBeInstanceOf(Date);
    for (let i = 0; i < 3; i += 1) await expectStatus(api.request('GET', '/api/projects', { token }), 200);
    expect(await lastUsed()).toEqual(first);
    // A minute later (the server's clock moved on, the recorded use moved back), the next use is recorded.
    server.clock.advance(61);
    await server.sql`update personal_access_tokens set last_used_at = last_used_at - interval '61 seconds' where id = ${id}`;
    const movedBack = await lastUsed();
    await expectStatus(api.request('GET', '/api/projects', { token }), 200);
    expect((await lastUsed())!.getTime()).toBeGreaterThan(movedBack!.getTime());
    const listed = await expectStatus(api.request('GET', '/api/tokens', { token: owner.accessToken }), 200);
    expect(listed[0].lastUsedAt).toBe((await lastUsed())!.toISOString());
  });

  it('ends with its owner: deleting the user deletes the tokens', async () => {
    const owner = await api.register();
    const { token } = await createToken(owner);
    await server.sql`delete from users where id = ${owner.user.id}`;
    expect((await api.request('GET', '/api/auth/me', { token })).status).toBe(401);
    expect((await server.sql`select 1 from personal_access_tokens where user_id = ${owner.user.id}`).length).toBe(0);
  });

  it('ends with its deleted account: every token of the user stops, its event sockets close (4401)', async () => {
    const [owner, other] = [await api.register(), await api.register()];
    const [first, second, others] = [await createToken(owner), await createToken(owner, { scope: 'read' }), await createToken(other)];
    // Each socket closes when its token's notice is handled: then the token's cache entry is gone too.
    const sockets = await Promise.all([first, second].map(({ token }) => openEventSocket(server.url, { token })));
    expect((await api.request('DELETE', '/api/auth/me', { token: owner.accessToken, json: { password: owner.password } })).status).toBe(200);
    for (const socket of sockets) expect((await socket.closed).code).toBe(4401);
    for (const { token } of [first, second]) expect((await api.request('GET', '/api/auth/me', { token })).status).toBe(401);
    expect((await api.request('GET', '/api/auth/me', { token: others.token })).status).toBe(200);
  });
});

describe('the cap on live tokens', () => {
  it('allows 100 live tokens per account, also under parallel requests, and another once one is revoked', async () => {
    const owner = await api.register();
    const attempts = await Promise.all(
      Array.from({ length: 104 }, (_, i) =>
        api.request('POST', '/api/tokens', { token: owner.accessToken, json: { name: `job ${i}`, scope: 'read', expiresIn: 3600 } }),
      ),
    );
    expect(attempts.filter((attempt) => attempt.status === 201)).toHaveLength(100);
    const refused = attempts.filter((attempt) => attempt.status !== 201);
    expect(refused).toHaveLength(4);
    for (const refusal of refused) {
      expect(refusal.status).toBe(429);
      expect(refusal.body.code).toBe('RATE_LIMITED');
      expect(refusal.body.detail).toContain('At most 100 live personal access tokens');
    }
    const live = await expectStatus(api.request('GET', '/api/tokens', { token: owner.accessToken }), 200);
    expect(live).toHaveLength(100);
    await expectStatus(api.request('DELETE', `/api/tokens/${live[0].id}`, { token: owner.accessToken }), 200);
    await createToken(owner);
  });
});
