import { afterAll, beforeAll, expect, it } from 'vitest';
import { openEventSocket } from './support/event-socket.js';
import { client } from './support/http.js';
import { startTestServer, type TestServer } from './support/server.js';

// Each instance keeps active sessions in memory (auth/session-cache.ts). Two instances on one database:
// what one instance (or anything else writing to the database) changes, the other must see as soon as the
// change's notice reached it; the instance that revokes a session refuses it at once.

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

/** A fresh user whose session both instances have accepted, so both hold it in memory. */
async function userKnownToBoth() {
  const user = await client(first.url).register();
  for (const server of [first, second]) expect((await client(server.url).request('GET', '/api/auth/me', { token: user.accessToken })).status).toBe(200);
  return user;
}

/**
 * Resolves once `server` has handled every notice committed so far, with no waiting on a clock: PostgreSQL
 * delivers notices to an instance's LISTEN connection in commit order, so once a bystander's later logout
 * has closed its event socket on `server` (4401), every earlier notice was handled too.
 */
async function noticesReached(server: TestServer): Promise<void> {
  const bystander = await client(first.url).register();
  const socket = await openEventSocket(server.url, { token: bystander.accessToken });
  await client(first.url).request('POST', '/api/auth/logout', { token: bystander.accessToken, json: { refreshToken: bystander.refreshToken } });
  expect((await socket.closed).code).toBe(4401);
}

it('refuses on every instance a session logged out through one of them', async () => {
  const user = await userKnownToBoth();
  const loggedOut = await client(first.url).request('POST', '/api/auth/logout', { token: user.accessToken, json: { refreshToken: user.refreshToken } });
  expect(loggedOut.status).toBe(200);
  expect((await client(first.url).request('GET', '/api/auth/me', { token: user.accessToken })).status).toBe(401);
  await noticesReached(second);
  for (const server of [second, first]) {
    const refused = await client(server.url).request('GET', '/api/auth/me', { token: user.accessToken });
    expect(refused.status).toBe(401);
    expect(refused.body.code).toBe('UNAUTHENTICATED');
  }
});

it('refuses on every instance a session revoked for refresh-token reuse through one of them', async () => {
  const user = await userKnownToBoth();
  const api = client(first.url);
  expect((await api.request('POST', '/api/auth/refresh', { json: { refreshToken: user.refreshToken } })).status).toBe(200);
  expect((await api.request('POST', '/api/auth/refresh', { json: { refreshToken: user.refreshToken } })).status).toBe(401);
  await noticesReached(second);
  for (const server of [second, first]) expect((await client(server.url).request('GET', '/api/auth/me', { token: user.accessToken })).status).toBe(401);
});

it('refuses the sessions of a user deleted from the database', async () => {
  const user = await userKnownToBoth();
  await first.sql`delete from users where id = ${user.user.id}`;
  await Promise.all([noticesReached(first), noticesReached(second)]);
  for (const server of [second, first]) expect((await client(server.url).request('GET', '/api/auth/me', { token: user.accessToken })).status).toBe(401);
});

it('applies a site role changed in the database (as the set-role command does) to sessions held in memory', async () => {
  await client(first.url).register(); // the first account is the site ADMIN; this test's user is not
  const user = await userKnownToBoth();
  const storage = (server: TestServer) => client(server.url).request('GET', '/api/files/storage', { token: user.accessToken });
  for (const server of [first, second]) expect((await storage(server)).body.site).toBeUndefined();
  await first.sql`update users set role = 'ADMIN' where id = ${user.user.id}`;
  await Promise.all([noticesReached(first), noticesReached(second)]);
  for (const server of [second, first]) expect((await storage(server)).body.site).toBeDefined();
});

it('refuses a session held in memory once its fixed lifetime is over', async () => {
  const user = await client(first.url).register();
  await first.sql`update sessions set expires_at = now() + interval '5 minutes' where user_id = ${user.user.id}`;
  for (const server of [first, second]) expect((await client(server.url).request('GET', '/api/auth/me', { token: user.accessToken })).status).toBe(200);
  // Six minutes on, for the instances (their clocks) and for the database (the session's end moved into the
  // past, with no notice); the access token, good for 15 minutes, still is.
  await first.sql`update sessions set expires_at = now() - interval '1 minute' where user_id = ${user.user.id}`;
  for (const server of [first, second]) server.clock.advance(6 * 60);
  for (const server of [first, second]) expect((await client(server.url).request('GET', '/api/auth/me', { token: user.accessToken })).status).toBe(401);
});
