import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BandClient, type TokenPair, type TokenStore } from '../src/index.js';
import { recordingDispatcher, registeredClient, startTestServer, type TestServer } from './support.js';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

/** One stored pair shared by several clients, as a file is shared by several processes, with an exclusive lock. */
function sharedStore(initial: TokenPair) {
  let stored: Pick<TokenPair, 'accessToken' | 'refreshToken'> | undefined = initial;
  let held: Promise<unknown> = Promise.resolve();
  const store: TokenStore = {
    load: async () => stored,
    save: async (pair) => {
      stored = { accessToken: pair.accessToken, refreshToken: pair.refreshToken };
    },
    withRefreshLock: <T>(refresh: () => Promise<T>) => {
      const run = held.then(refresh, refresh);
      held = run.catch(() => undefined);
      return run;
    },
  };
  return { store, current: () => stored, signOut: () => (stored = undefined) };
}

/** Moves the server's clock past the access tokens' lifetime: the next call meets TOKEN_EXPIRED. */
function expireAccessTokens(): void {
  server.clock.advance(server.config.accessTokenTtlSeconds + 1);
}

describe('a token store shared by several clients', () => {
  it('several clients meeting an expired token at once: one refresh wins, the others take its pair from the store, none fails', async () => {
    const { client: first } = await registeredClient(server.url);
    const initial = { ...first.sessionTokens, expiresIn: 0 } as TokenPair;
    const shared = sharedStore(initial);
    const { dispatcher, requests } = recordingDispatcher();
    const clients = [1, 2, 3, 4, 5].map(() => new BandClient({ baseUrl: server.url, dispatcher, ...initial, tokenStore: shared.store }));
    expireAccessTokens();

    const answers = await Promise.all(clients.map((client) => client.auth.me()));
    expect(new Set(answers.map((me) => me.id)).size).toBe(1);
    expect(requests.filter((r) => r === 'POST /api/auth/refresh')).toHaveLength(1);
    expect(shared.current()!.refreshToken).not.toBe(initial.refreshToken);
    for (const client of clients) expect(client.sessionTokens).toEqual(shared.current());
    // A second rotation of the same refresh token would have revoked the session.
    expect(await clients[0]!.projects.list()).toEqual([]);
  });

  it('reports a store emptied meanwhile (signed out elsewhere) as an authentication error, without refreshing', async () => {
    const { client: first } = await registeredClient(server.url);
    const shared = sharedStore({ ...first.sessionTokens, expiresIn: 0 } as TokenPair);
    const { dispatcher, requests } = recordingDispatcher();
    const client = new BandClient({ baseUrl: server.url, dispatcher, ...first.sessionTokens, tokenStore: shared.store });
    shared.signOut();
    expireAccessTokens();

    await expect(client.auth.me()).rejects.toMatchObject({ status: 401, code: 'UNAUTHENTICATED' });
    expect(requests).not.toContain('POST /api/auth/refresh');
    expect(client.sessionTokens).toEqual({ accessToken: undefined, refreshToken: undefined });
  });

  it('saves the pair of a sign-in in the store', async () => {
    const saved: TokenPair[] = [];
    const store: TokenStore = { load: async () => saved.at(-1), save: async (pair) => void saved.push(pair) };
    const { client } = await registeredClient(server.url, { tokenStore: store });
    expect(saved).toEqual([{ ...client.sessionTokens, expiresIn: expect.any(Number) }]);
  });

  it('reconnects events with a token refreshed through the store', async () => {
    const own = await startTestServer();
    const port = new URL(own.url).port;
    const { client: first } = await registeredClient(own.url);
    const shared = sharedStore({ ...first.sessionTokens, expiresIn: 0 } as TokenPair);
    const client = new BandClient({ baseUrl: own.url, ...first.sessionTokens, tokenStore: shared.store });
    let hellos = 0;
    const subscription = client.events.subscribe({ onEvent: () => undefined, onHello: () => void (hellos += 1) });
    await expect.poll(() => hellos, { timeout: 10_000 }).toBe(1);

    own.clock.advance(own.config.accessTokenTtlSeconds + 1); // the access token expires while the socket is down
    await own.close();
    const again = await startTestServer({ DATABASE_URL: own.env.DATABASE_URL!, PORT: port }, own.clock);
    try {
      await expect.poll(() => hellos, { timeout: 15_000 }).toBe(2);
      expect(shared.current()!.refreshToken).not.toBe(first.sessionTokens.refreshToken);
      expect(client.sessionTokens).toEqual(shared.current());
    } finally {
      subscription.close();
      await again.close();
    }
  });
});
