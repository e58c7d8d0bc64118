import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BandClient, type HelloMessage, type ProjectEvent, type TokenPair } from '../src/index.js';
import { registeredClient, startTestServer, type TestServer } from './support.js';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server?.close());

/**
 * Records a subscription's messages and waits for the ones a test expects: each message re-checks the
 * waiting conditions, so nothing polls. The guard below the test timeout only makes a failure say what
 * arrived, and whether the socket was dropped (events sent while it was reconnecting are not replayed).
 */
function recorder() {
  const events: ProjectEvent[] = [];
  const hellos: HelloMessage[] = [];
  const disconnects: number[] = [];
  const waiting = new Set<() => void>();
  const changed = () => {
    for (const wake of waiting) wake();
  };
  const until = (check: () => boolean) =>
    new Promise<void>((resolve, reject) => {
      const wake = () => {
        if (!check()) return;
        waiting.delete(wake);
        clearTimeout(guard);
        resolve();
      };
      const guard = setTimeout(() => {
        waiting.delete(wake);
        reject(new Error(`still waiting; events: ${JSON.stringify(events.map((e) => [e.type, e.projectId]))}, hellos: ${hellos.length}, disconnects: ${JSON.stringify(disconnects)}`));
      }, 25_000);
      waiting.add(wake);
      wake();
    });
  return {
    events,
    hellos,
    until,
    onEvent: (e: ProjectEvent) => {
      events.push(e);
      changed();
    },
    onHello: (h: HelloMessage) => {
      hellos.push(h);
      changed();
    },
    onDisconnect: ({ code }: { code: number }) => {
      disconnects.push(code);
      changed();
    },
  };
}

describe('client.events.subscribe', () => {
  it("streams the hello and the events of the user's projects; projectId narrows them to one", async () => {
    const { client, user } = await registeredClient(server.url);
    const all = recorder();
    const allSubscription = client.events.subscribe(all);
    await all.until(() => all.hellos.length === 1);
    expect(all.hellos[0]).toEqual({ type: 'hello', userId: user.id, projectIds: [] });

    const first = await client.projects.create({ name: 'First' });
    const second = await client.projects.create({ name: 'Second' });
    // A NOTIFY reaches the hub a moment after its commit, and goes to the sockets open at that moment: once the
    // first socket has this member.added, a socket opened now cannot receive it too.
    await all.until(() => all.events.length === 2);
    const onlySecond = recorder();
    const secondSubscription = client.events.subscribe({ ...onlySecond, projectId: second.id });
    await onlySecond.until(() => onlySecond.hellos.length === 1);
    await client.projects.update(first.id, { name: 'First, renamed' });
    await client.projects.update(second.id, { name: 'Second, renamed' });

    await all.until(() => all.events.length === 4);
    expect(all.events.map((e) => [e.type, e.projectId])).toEqual([
      ['member.added', first.id],
      ['member.added', second.id],
      ['project.updated', first.id],
      ['project.updated', second.id],
    ]);
    await onlySecond.until(() => onlySecond.events.length === 1);
    expect(onlySecond.events[0]).toMatchObject({ type: 'project.updated', data: { project: { id: second.id, name: 'Second, renamed' } } });
    allSubscription.close();
    secondSubscription.close();
    await Promise.all([allSubscription.closed, secondSubscription.closed]);
  });

  it('reconnects after the server goes away and comes back, refreshing the expired access token first', async () => {
    const own = await startTestServer();
    const port = new URL(own.url).port;
    const pairs: TokenPair[] = [];
    const { client } = await registeredClient(own.url, { onTokens: (pair) => void pairs.push(pair) });
    const seen = recorder();
    const disconnects: number[] = [];
    const subscription = client.events.subscribe({ ...seen, onDisconnect: ({ code }) => void disconnects.push(code) });
    await seen.until(() => seen.hellos.length === 1);

    own.clock.advance(own.config.accessTokenTtlSeconds + 1); // the access token expires
    await own.close();
    const again = await startTestServer({ DATABASE_URL: own.env.DATABASE_URL!, PORT: port }, own.clock);
    try {
      await seen.until(() => seen.hellos.length === 2);
      expect(disconnects[0]).toBe(1001);
      // Registration, then at least the refresh before reconnecting (a slow machine may need another one).
      expect(pairs.length).toBeGreaterThanOrEqual(2);
      const project = await client.projects.create({ name: 'After the restart' });
      await seen.until(() => seen.events.some((e) => e.projectId === project.id));
    } finally {
      subscription.close();
      await again.close();
    }
  });

  it('ends with a 401, without reconnecting, when the session is logged out', async () => {
    const { client } = await registeredClient(server.url);
    const seen = recorder();
    let disconnects = 0;
    const subscription = client.events.subscribe({ ...seen, onDisconnect: () => void (disconnects += 1) });
    await seen.until(() => seen.hellos.length === 1);
    const other = new BandClient({ baseUrl: server.url, ...client.sessionTokens });
    await other.auth.logout();
    await expect(subscription.closed).rejects.toMatchObject({ status: 401, code: 'UNAUTHENTICATED' });
    expect(disconnects).toBe(0);
  });

  it('ends quietly when its signal aborts', async () => {
    const { client } = await registeredClient(server.url);
    const seen = recorder();
    const controller = new AbortController();
    const subscription = client.events.subscribe({ ...seen, signal: controller.signal });
    await seen.until(() => seen.hellos.length === 1);
    controller.abort();
    await expect(subscription.closed).resolves.toBeUndefined();
  });

  it('ends with what onEvent throws', async () => {
    const { client } = await registeredClient(server.url);
    const failure = new Error('the caller failed');
    const hello = recorder();
    const subscription = client.events.subscribe({
      onHello: hello.onHello,
      onEvent: () => {
        throw failure;
      },
    });
    await hello.until(() => hello.hellos.length === 1);
    await client.projects.create({ name: 'Trigger' });
    await expect(subscription.closed).rejects.toBe(failure);
  });
});
