import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, type TestResponse } from './support/http.js';
import { openSocket, requestHead, whenClosed } from './support/raw-http.js';
import { startTestServer, type TestServer } from './support/server.js';

// §17: a creating POST with an Idempotency-Key is done once per user and key; repeats get the first answer.
// Personal access tokens are the creates used here: their answer holds a secret shown once, kept encrypted.

const servers: TestServer[] = [];
let server: TestServer;
let api: ReturnType<typeof client>;
let owner: Awaited<ReturnType<ReturnType<typeof client>['register']>>;

beforeAll(async () => {
  server = await startTestServer();
  servers.push(server);
  api = client(server.url);
  owner = await api.register();
});
afterAll(() => Promise.all(servers.map((s) => s.close())));

const tokenBody = (name: string) => ({ name, scope: 'read', expiresIn: 3600 });

function createToken(key: string, body: object = tokenBody('CI'), accessToken = owner.accessToken): Promise<TestResponse> {
  return api.request('POST', '/api/tokens', { token: accessToken, json: body, headers: { 'idempotency-key': key } });
}

async function tokensNamed(name: string): Promise<number> {
  const [row] = await server.sql`select count(*)::int as count from personal_access_tokens where name = ${name}`;
  return row!.count as number;
}

/** Sends a repeat until the first request has finished: a repeat while it runs is 409 with Retry-After, as a client would do. */
async function repeatUntilAnswered(send: () => Promise<TestResponse>): Promise<TestResponse> {
  for (let attempt = 0; attempt < 200; attempt += 1) {
    const answer = await send();
    if (answer.status !== 409 || answer.headers.get('retry-after') === null) return answer;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('the first request never finished');
}

describe('Idempotency-Key on creating POSTs', () => {
  it('answers a repeat with the first answer (status, body, Location, Idempotent-Replayed) and creates nothing more', async () => {
    const key = randomUUID();
    const first = await createToken(key, tokenBody('replayed'));
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const repeat = await createToken(key, tokenBody('replayed'));
    expect(repeat.status).toBe(201);
    expect(repeat.headers.get('idempotent-replayed')).toBe('true');
    expect(repeat.body).toEqual(first.body);
    expect(repeat.headers.get('location')).toBe(first.headers.get('location'));
    expect(repeat.headers.get('x-request-id')).not.toBe(first.headers.get('x-request-id'));
    expect(await tokensNamed('replayed')).toBe(1);
  });

  it('creates once when the first answer is lost (the client closed the connection right after sending)', async () => {
    const key = randomUUID();
    const payload = JSON.stringify(tokenBody('dropped'));
    const socket = await openSocket(server.url);
    const closed = whenClosed(socket);
    socket.end(
      requestHead('POST', '/api/tokens', {
        Authorization: `Bearer ${owner.accessToken}`,
        'Content-Type': 'application/json',
        'Content-Length': Buffer.byteLength(payload),
        'Idempotency-Key': key,
      }) + payload,
    );
    socket.destroy();
    await closed;

    const retried = await repeatUntilAnswered(() => createToken(key, tokenBody('dropped')));
    expect(retried.status).toBe(201);
    expect(await tokensNamed('dropped')).toBe(1);
    // The replayed secret is the real one: it authenticates.
    const me = await api.request('GET', '/api/auth/me', { token: retried.body.token });
    expect(me.status).toBe(200);
  });

  it('creates one record for 20 parallel requests with one key; the others get the replay or 409 IDEMPOTENCY_CONFLICT', async () => {
    const key = randomUUID();
    const answers = await Promise.all(Array.from({ length: 20 }, () => createToken(key, tokenBody('parallel'))));
    for (const answer of answers) {
      expect([201, 409]).toContain(answer.status);
      if (answer.status === 409) expect(answer.body.code).toBe('IDEMPOTENCY_CONFLICT');
    }
    const created = answers.filter((answer) => answer.status === 201);
    expect(new Set(created.map((answer) => answer.body.id)).size).toBe(1);
    expect(await tokensNamed('parallel')).toBe(1);
  });

  it('refuses the same key with another body or on another path: 409 IDEMPOTENCY_CONFLICT', async () => {
    const key = randomUUID();
    expect((await createToken(key, tokenBody('first body'))).status).toBe(201);
    const otherBody = await createToken(key, tokenBody('second body'));
    expect(otherBody.status).toBe(409);
    expect(otherBody.body.code).toBe('IDEMPOTENCY_CONFLICT');
    expect(await tokensNamed('second body')).toBe(0);
    // The same JSON written with its keys in another order is the same body.
    const reordered = await createToken(key, { expiresIn: 3600, scope: 'read', name: 'first body' });
    expect(reordered.status).toBe(201);
    expect(reordered.headers.get('idempotent-replayed')).toBe('true');
  });

  it('keeps keys per user: another user may use the same key', async () => {
    const key = randomUUID();
    const other = await api.register();
    expect((await createToken(key, tokenBody('per user'))).status).toBe(201);
    const theirs = await createToken(key, tokenBody('per user'), other.accessToken);
    expect(theirs.status).toBe(201);
    expect(theirs.headers.get('idempotent-replayed')).toBeNull();
    expect(await tokensNamed('per user')).toBe(2);
  });

  it('keeps keys per credential: a token limited to one project never gets a replay of another project\'s invitation', async () => {
    const key = randomUUID();
    const mine = (name: string) => api.request('POST', '/api/projects', { token: owner.accessToken, json: { name } });
    const reached = (await mine('Reached')).body;
    const other = (await mine('Other')).body;
    const limited = await api.request('POST', '/api/tokens', {
      token: owner.accessToken,
      json: { name: 'limited', scope: 'write', projectIds: [reached.id], expiresIn: 3600 },
    });
    const invite = (accessToken: string) =>
      api.request('POST', `/api/projects/${other.id}/invite`, {
        token: accessToken,
        json: { email: 'guest@example.com', role: 'MEMBER' },
        headers: { 'idempotency-key': key },
      });
    const first = await invite(owner.accessToken);
    expect(first.status).toBe(201);
    // The same key, path and body through the token: the project does not exist for it, replay or not.
    const throughToken = await invite(limited.body.token);
    expect(throughToken.headers.get('idempotent-replayed')).toBeNull();
    expect(throughToken.status).toBe(404);
    expect(throughToken.text).not.toContain(first.body.token);
    // The session still gets its own answer again.
    const again = await invite(owner.accessToken);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
  });

  it('works on routes whose handler reads the JSON itself (they take JSON or a form): projects and vibes', async () => {
    const key = randomUUID();
    const create = () => api.request('POST', '/api/projects', { token: owner.accessToken, json: { name: 'Keyed' }, headers: { 'idempotency-key': key } });
    const first = await create();
    expect(first.status).toBe(201);
    const repeat = await create();
    expect(repeat.status).toBe(201);
    expect(repeat.headers.get('idempotent-replayed')).toBe('true');
    expect(repeat.body.id).toBe(first.body.id);
    const vibe = await api.request('POST', `/api/projects/${first.body.id}/vibes`, { token: owner.accessToken, json: { name: 'V' }, headers: { 'idempotency-key': randomUUID() } });
    expect(vibe.status).toBe(201);
    expect(vibe.body.name).toBe('V');
  });

  it('replays a 4xx answer too', async () => {
    const key = randomUUID();
    const first = await createToken(key, { name: 'x', scope: 'everything', expiresIn: 3600 });
    expect(first.status).toBe(400);
    const repeat = await createToken(key, { name: 'x', scope: 'everything', expiresIn: 3600 });
    expect(repeat.status).toBe(400);
    expect(repeat.headers.get('idempotent-replayed')).toBe('true');
    expect(repeat.body.errors).toEqual(first.body.errors);
  });

  it('refuses a malformed key: 400 VALIDATION_FAILED naming Idempotency-Key', async () => {
    for (const key of ['has space', 'x'.repeat(256), 'caf\u00e9']) {
      const answer = await createToken(key, tokenBody('bad key'));
      expect(answer.status).toBe(400);
      expect(answer.body.errors).toEqual([{ field: 'Idempotency-Key', message: expect.any(String) }]);
    }
    expect(await tokensNamed('bad key')).toBe(0);
  });

  it("replays a kept answer only to its own user: one moved to another user's row does not open there (409, not a 500)", async () => {
    const key = randomUUID();
    const other = await api.register();
    expect((await createToken(key, tokenBody('sealed'))).status).toBe(201);
    expect((await createToken(key, tokenBody('sealed'), other.accessToken)).status).toBe(201);
    // The other user's row takes the owner's sealed answer: same key, same body, another user.
    await server.sql`
      update idempotency_keys set answer = (select mine.answer from idempotency_keys mine where mine.user_id = ${owner.user.id} and mine.key_hash = idempotency_keys.key_hash)
      where user_id = ${other.user.id}`;
    const replay = await createToken(key, tokenBody('sealed'), other.accessToken);
    expect(replay.status).toBe(409);
    expect(replay.body.code).toBe('IDEMPOTENCY_CONFLICT');
    expect(replay.body.detail).toMatch(/can no longer be read/);
  });

  it('stores neither the key nor the secret in plain text', async () => {
    const key = `plain-${randomUUID()}`;
    const created = await createToken(key, tokenBody('encrypted'));
    const rows = await server.sql`select * from idempotency_keys`;
    const stored = JSON.stringify(rows.map((row) => ({ ...row, answer: Buffer.from(row.answer ?? []).toString('latin1') })));
    expect(stored).not.toContain(key);
    expect(stored).not.toContain(created.body.token);
  });

  it('purges keys older than a day (and does not replay them)', async () => {
    const clock = server.clock;
    const old = randomUUID();
    expect((await createToken(old, tokenBody('aged'))).status).toBe(201);
    clock.advance(25 * 60 * 60);
    const signedIn = await api.request('POST', '/api/auth/login', { json: { email: owner.user.email, password: owner.password } });
    owner = { ...owner, accessToken: signedIn.body.accessToken };
    const fresh = randomUUID();
    expect((await createToken(fresh, tokenBody('fresh'))).status).toBe(201);
    // A day on, the key is free again: the same request creates anew.
    const again = await createToken(old, tokenBody('aged'));
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBeNull();
    expect(await tokensNamed('aged')).toBe(2);

    // A server started on the same database purges at its start: the keys of the tests above, a day old, go;
    // the two used now stay.
    expect((await server.sql`select count(*)::int as count from idempotency_keys`)[0]!.count).toBeGreaterThan(2);
    servers.push(await startTestServer({ DATABASE_URL: server.env.DATABASE_URL! }, clock));
    expect((await server.sql`select count(*)::int as count from idempotency_keys`)[0]!.count).toBe(2);
  });
});
