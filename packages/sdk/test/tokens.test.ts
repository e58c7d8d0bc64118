import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BandClient, type HelloMessage, isAuthError, type TokenPair } from '../src/index.js';
import { eventually, recordingDispatcher, registeredClient, startTestServer, type TestServer } from './support.js';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server?.close());

describe('client.tokens and new BandClient({ token })', () => {
  it('creates, lists and deletes personal access tokens with a session', async () => {
    const { client } = await registeredClient(server.url);
    const project = await client.projects.create({ name: 'Summer EP' });
    const created = await client.tokens.create({ name: 'CI', scope: 'write', projectIds: [project.id], expiresIn: 90 * 86_400 });
    expect(created.token).toMatch(/^bcp_[0-9A-Za-z]{36}$/);
    expect(created).toMatchObject({ name: 'CI', scope: 'write', projectIds: [project.id], tokenHint: `bcp_${created.token.slice(-4)}` });
    expect((await client.tokens.list()).map((t) => t.id)).toEqual([created.id]);
    const { token: _secret, ...shown } = created;
    expect(await client.tokens.get(created.id)).toEqual(shown);
    expect(await client.tokens.delete(created.id)).toEqual({ id: created.id, deleted: true });
    expect(await client.tokens.list()).toEqual([]);
  });

  it('works with only a token: no login, no refresh; revoked, every call is an auth error', async () => {
    const { client: owner, user } = await registeredClient(server.url);
    const project = await owner.projects.create({ name: 'Mixes' });
    const { id, token } = await owner.tokens.create({ name: 'CI', scope: 'write', expiresIn: 3600 });

    const pairs: TokenPair[] = [];
    const { dispatcher, requests } = recordingDispatcher();
    const ci = new BandClient({ baseUrl: server.url, token, dispatcher, onTokens: (pair) => void pairs.push(pair) });
    expect((await ci.auth.me()).id).toBe(user.id);
    const current = await ci.tokens.current();
    expect(current).toEqual({ me: expect.objectContaining({ id: user.id }), token: { scope: 'write', expiresAt: expect.any(String), projectIds: null } });
    expect((await owner.tokens.current()).token).toBeNull();
    expect((await ci.projects.list()).map((p) => p.id)).toEqual([project.id]);
    const hellos: HelloMessage[] = [];
    const subscription = ci.events.subscribe({ onEvent: () => undefined, onHello: (hello) => void hellos.push(hello) });
    try {
      await eventually(async () => hellos.length > 0);
      expect(hellos[0]!.projectIds).toEqual([project.id]);
    } finally {
      subscription.close();
    }

    await owner.tokens.delete(id);
    const error = await ci.projects.list().catch((e: unknown) => e);
    expect(isAuthError(error)).toBe(true);
    expect(error).toMatchObject({ status: 401, code: 'UNAUTHENTICATED' });
    expect(requests.filter((r) => r.includes('/api/auth/refresh') || r.includes('/api/auth/login'))).toEqual([]);
    expect(pairs).toEqual([]);
  });

  it('refuses to manage tokens from a token (403 INSUFFICIENT_SCOPE)', async () => {
    const { client: owner } = await registeredClient(server.url);
    const { token } = await owner.tokens.create({ name: 'CI', scope: 'write', expiresIn: 3600 });
    const ci = new BandClient({ baseUrl: server.url, token });
    await expect(ci.tokens.create({ name: 'Minted', scope: 'write', expiresIn: 3600 })).rejects.toMatchObject({ status: 403, code: 'INSUFFICIENT_SCOPE' });
  });

  it('takes a token or a session pair, not both', () => {
    expect(() => new BandClient({ baseUrl: server.url, token: 'bcp_x', accessToken: 'a' })).toThrow(TypeError);
  });
});
