import { afterAll, beforeAll, expect, it } from 'vitest';
import { expectStatus } from './authz/fixture.js';
import { openEventSocket } from './support/event-socket.js';
import { client } from './support/http.js';
import { startTestServer, type TestServer } from './support/server.js';

// Each instance keeps the principals of personal access tokens in memory (core/personal-access-token-cache.ts),
// as it does sessions. Two instances on one database: a token revoked, or a user deleted or given another role, through
// one must be seen by the other once the change's notice reached it.

let first: TestServer;
let second: TestServer;

beforeAll(async () => {
  first = await startTestServer();
  second = await startTestServer({ DATABASE_URL: first.env.DATABASE_URL! });
});
afterAll(async () => {
  await second?.close();
  await first?.close();
});

/** A fresh user with a token both instances have accepted, so both hold it in memory. */
async function tokenKnownToBoth() {
  const user = await client(first.url).register();
  const created = await expectStatus(
    client(first.url).request('POST', '/api/tokens', { token: user.accessToken, json: { name: 'CI', scope: 'write', expiresIn: 3600 } }),
    201,
  );
  for (const server of [first, second]) expect((await client(server.url).request('GET', '/api/auth/me', { token: created.token })).status).toBe(200);
  return { user, id: created.id as string, token: created.token as string };
}

/** Resolves once `server` handled every notice committed so far (they arrive in commit order): see session-cache.test.ts. */
async function noticesReached(server: TestServer): Promise<void> {
  const bystander = await client(first.url).register();
  const socket = await openEventSocket(server.url, { token: bystander.accessToken });
  await client(first.url).request('POST', '/api/auth/logout', { token: bystander.accessToken, json: { refreshToken: bystander.refreshToken } });
  expect((await socket.closed).code).toBe(4401);
}

it('refuses on every instance a token revoked through one of them, on that one at once', async () => {
  const { user, id, token } = await tokenKnownToBoth();
  await expectStatus(client(first.url).request('DELETE', `/api/tokens/${id}`, { token: user.accessToken }), 200);
  expect((await client(first.url).request('GET', '/api/auth/me', { token })).status).toBe(401);
  await noticesReached(second);
  expect((await client(second.url).request('GET', '/api/auth/me', { token })).status).toBe(401);
});

it('refuses the tokens of a user deleted from the database', async () => {
  const { user, token } = await tokenKnownToBoth();
  await first.sql`delete from users where id = ${user.user.id}`;
  await Promise.all([noticesReached(first), noticesReached(second)]);
  for (const server of [second, first]) expect((await client(server.url).request('GET', '/api/auth/me', { token })).status).toBe(401);
});

it('applies a site role changed in the database to tokens held in memory', async () => {
  const { user, token } = await tokenKnownToBoth(); // not the database's first account: a MEMBER
  const storage = (server: TestServer) => client(server.url).request('GET', '/api/files/storage', { token });
  for (const server of [first, second]) expect((await storage(server)).body.site).toBeUndefined();
  await first.sql`update users set role = 'ADMIN' where id = ${user.user.id}`;
  await Promise.all([noticesReached(first), noticesReached(second)]);
  for (const server of [second, first]) expect((await storage(server)).body.site).toBeDefined();
});
