import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import type { EventType, ProjectEvent } from '@bandcollab/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sql } from '../src/core/database.js';
import { EVENTS_CHANNEL } from '../src/events/publisher.js';
import { openEventSocket } from './support/event-socket.js';
import { client } from './support/http.js';
import { startTestServer, type TestServer } from './support/server.js';

// The hub's own rules, fed the way another instance would feed them: NOTIFYs on the shared channel.
// The services' events, published by real HTTP calls, are covered in events-delivery.test.ts.

let first: TestServer;
let second: TestServer;
/** Pings every 2 seconds: what depends on the heartbeat happens within a test's time. */
let pinging: TestServer;

beforeAll(async () => {
  first = await startTestServer();
  // The same database: the other instances see only what NOTIFY carries.
  second = await startTestServer({ DATABASE_URL: first.env.DATABASE_URL! });
  pinging = await startTestServer({ DATABASE_URL: first.env.DATABASE_URL!, EVENTS_HEARTBEAT_SECONDS: '2' });
});
afterAll(async () => {
  await pinging?.close();
  await second?.close();
  await first?.close();
});

/** A NOTIFY payload; the hub routes by type, project and membership data only, so the rest of `data` may be left out. */
function event(type: EventType, projectId: string, data: object = {}): ProjectEvent {
  return { id: randomUUID(), type, projectId, actor: { id: randomUUID(), name: 'Someone' }, at: new Date().toISOString(), data } as ProjectEvent;
}

/** Publishes events in one transaction, as a service does. */
async function publish(sql: Sql, ...events: ProjectEvent[]): Promise<void> {
  await sql.begin(async (tx) => {
    for (const e of events) await tx`select pg_notify(${EVENTS_CHANNEL}, ${JSON.stringify(e)})`;
  });
}

async function projectOf(sql: Sql, ...userIds: string[]): Promise<string> {
  const [project] = await sql<{ id: string }[]>`insert into projects (name) values ('Fixture') returning id`;
  for (const userId of userIds) {
    await sql`insert into project_members (project_id, user_id, role) values (${project!.id}, ${userId}, 'ADMIN')`;
  }
  return project!.id;
}

async function userWithProject() {
  const user = await client(first.url).register();
  const projectId = await projectOf(first.sql, user.user.id);
  return { ...user, projectId };
}

describe('fan-out', () => {
  it("delivers a project's events, in commit order, to its members on every instance and to no one else", async () => {
    const member = await userWithProject();
    const outsider = await userWithProject();
    const onFirst = await openEventSocket(first.url, { token: member.accessToken });
    const onSecond = await openEventSocket(second.url, { token: member.accessToken });
    const outsiderSocket = await openEventSocket(second.url, { token: outsider.accessToken });
    expect(onSecond.hello.projectIds).toEqual([member.projectId]);

    const sent = [event('vibe.created', member.projectId), event('cut.created', member.projectId), event('vibe.deleted', member.projectId)];
    await publish(first.sql, ...sent);
    await publish(first.sql, event('project.updated', outsider.projectId));

    for (const socket of [onFirst, onSecond]) {
      await socket.waitFor((e) => e.id === sent[2]!.id);
      expect(socket.events).toEqual(sent);
    }
    // Notices arrive in commit order: once the outsider's own event is in, the others are never coming.
    await outsiderSocket.waitFor((e) => e.projectId === outsider.projectId);
    expect(outsiderSocket.events.map((e) => e.projectId)).toEqual([outsider.projectId]);
    for (const socket of [onFirst, onSecond, outsiderSocket]) socket.close();
  });

  it('starts and stops delivering a project as the user is added to and removed from it', async () => {
    const owner = await userWithProject();
    const joiner = await userWithProject();
    const socket = await openEventSocket(second.url, { token: joiner.accessToken });
    const project = owner.projectId;

    const before = event('vibe.created', project);
    const added = event('member.added', project, { member: { userId: joiner.user.id } });
    const during = event('vibe.updated', project);
    const removed = event('member.removed', project, { userId: joiner.user.id });
    const after = event('vibe.deleted', project);
    const sentinel = event('project.updated', joiner.projectId);
    await publish(first.sql, before);
    await publish(first.sql, added, during);
    await publish(first.sql, removed);
    await publish(first.sql, after);
    await publish(first.sql, sentinel);

    await socket.waitFor((e) => e.id === sentinel.id);
    expect(socket.events.map((e) => e.id)).toEqual([added.id, during.id, removed.id, sentinel.id]);
    socket.close();
  });

  it('stops delivering a deleted project', async () => {
    const user = await userWithProject();
    const socket = await openEventSocket(first.url, { token: user.accessToken });
    const deleted = event('project.deleted', user.projectId, { projectId: user.projectId });
    const sentinelProject = await projectOf(first.sql, user.user.id);
    await publish(first.sql, deleted);
    await publish(first.sql, event('vibe.created', user.projectId));
    await publish(first.sql, event('member.added', sentinelProject, { member: { userId: user.user.id } }));
    await socket.waitFor((e) => e.projectId === sentinelProject);
    expect(socket.events.map((e) => e.type)).toEqual(['project.deleted', 'member.added']);
    socket.close();
  });
});

describe('sessions', () => {
  it('closes a socket with 4401 when its session reaches the end of its fixed lifetime', async () => {
    const user = await userWithProject();
    await first.sql`update sessions set expires_at = now() + interval '1.5 seconds' where user_id = ${user.user.id}`;
    const socket = await openEventSocket(pinging.url, { token: user.accessToken });
    expect(await socket.closed).toEqual({ code: 4401, reason: 'The session has ended' });
  });
});

describe('a dropped LISTEN connection', () => {
  it('is re-established, and the sockets that may have missed events are asked to reconnect with 1012', async () => {
    const own = await startTestServer();
    try {
      const user = await client(own.url).register();
      const projectId = await projectOf(own.sql, user.user.id);
      const before = await openEventSocket(own.url, { token: user.accessToken });
      await own.sql`select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and query ilike 'listen%'`;
      expect(await before.closed).toEqual({ code: 1012, reason: 'Events may have been missed; reconnect' });

      const after = await openEventSocket(own.url, { token: user.accessToken });
      const sent = event('vibe.created', projectId);
      await publish(own.sql, sent);
      await after.waitFor((e) => e.id === sent.id);
      after.close();
    } finally {
      await own.close();
    }
  });
});

describe('unhealthy peers', () => {
  it('drops a peer that stops answering pings', async () => {
    const user = await userWithProject();
    const silent = await openEventSocket(pinging.url, { token: user.accessToken, autoPong: false });
    const healthy = await openEventSocket(pinging.url, { token: user.accessToken });
    const closed = await silent.closed;
    expect(closed.code).toBe(1006);
    expect(healthy.socket.readyState).toBe(healthy.socket.OPEN);
    healthy.close();
  });

  it('closes a reader that falls more than 1 MiB behind with 1013 instead of buffering without bound', async () => {
    const user = await userWithProject();
    const slow = await openEventSocket(first.url, { token: user.accessToken });
    // Another reader of the same instance: the hub dispatches notices one after another, so once this one has
    // the notice committed after the bulk, the hub has offered the slow reader every bulk notice.
    const other = await userWithProject();
    const witness = await openEventSocket(first.url, { token: other.accessToken });
    slow.socket.pause();
    const padding = 'x'.repeat(7000);
    const total = 4000;
    await first.sql`
      select pg_notify(${EVENTS_CHANNEL}, json_build_object(
        'id', gen_random_uuid(), 'type', 'vibe.updated', 'projectId', ${user.projectId}::uuid,
        'actor', json_build_object('id', gen_random_uuid(), 'name', 'Bulk'), 'at', now(),
        'data', json_build_object('n', n, 'padding', ${padding}::text))::text)
      from generate_series(1, ${total}) as n`;
    const after = event('vibe.updated', other.projectId);
    await publish(first.sql, after);
    await witness.waitFor((e) => e.id === after.id);
    witness.close();
    slow.socket.resume();
    const closed = await slow.closed;
    expect(closed.code).toBe(1013);
    expect(slow.events.length).toBeGreaterThan(0);
    expect(slow.events.length).toBeLessThan(total);
  });
});
