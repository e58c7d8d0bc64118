import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import type { ProjectEvent } from '@bandcollab/sdk';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { EVENTS_CHANNEL } from '../src/events/publisher.js';
import { addMember, type Api, expectStatus, seedProject, startWithUsers, type User } from './authz/fixture.js';
import type { TestServer } from './support/server.js';

let server: TestServer;
let api: Api;
let owner: User;
let member: User;
const events: ProjectEvent[] = [];
const markers = new Map<string, () => void>();
let unlisten: () => Promise<void>;

beforeAll(async () => {
  ({ server, api, users: [owner, member] } = await startWithUsers('Owner', 'Member'));
  ({ unlisten } = await server.sql.listen(EVENTS_CHANNEL, (payload) => {
    const message = JSON.parse(payload) as ProjectEvent | { type: 'marker'; id: string };
    if (message.type === 'marker') markers.get(message.id)?.();
    else events.push(message);
  }));
});
afterAll(async () => {
  await unlisten?.();
  await server?.close();
});

/**
 * Runs `action` and answers the events it published. PostgreSQL delivers notifications in commit order, so
 * once a marker sent after the action arrives, every event the action committed has arrived before it.
 */
async function eventsOf(action: () => Promise<unknown>): Promise<ProjectEvent[]> {
  // Events of earlier set-up steps may still be on their way: they arrive before this first marker.
  await flushNotifications();
  const before = events.length;
  await action();
  await flushNotifications();
  return events.slice(before);
}

/** Resolves once every notification committed so far has arrived. */
async function flushNotifications(): Promise<void> {
  const id = randomUUID();
  const arrived = new Promise<void>((resolve) => markers.set(id, resolve));
  await server.sql`select pg_notify(${EVENTS_CHANNEL}, ${JSON.stringify({ type: 'marker', id })})`;
  await arrived;
  markers.delete(id);
}

it('publishes each change of projects, members, vibes and cuts with the agreed payload', async () => {
  const seeded = await seedProject(api, owner.accessToken);
  const call = (method: string, path: string, json?: unknown) =>
    expectStatus(api.request(method, path, { token: owner.accessToken, json }), method === 'POST' && !path.endsWith('/restore') ? 201 : 200);

  // The member joins by accepting the invitation link: the change is theirs.
  const [added] = await eventsOf(() => addMember(api, owner.accessToken, seeded.id, member));
  expect(added).toMatchObject({
    type: 'member.added',
    projectId: seeded.id,
    actor: { id: member.user.id, name: member.user.name },
    data: { member: { userId: member.user.id, role: 'MEMBER' } },
  });
  expect(added!.at).toMatch(/Z$/);

  const [roleChanged] = await eventsOf(() => call('PUT', `/api/projects/${seeded.id}/members/${member.user.id}`, { role: 'ADMIN' }));
  expect(roleChanged).toMatchObject({ type: 'member.role_changed', data: { member: { userId: member.user.id, role: 'ADMIN' } } });

  const [updated] = await eventsOf(() => call('PUT', `/api/projects/${seeded.id}`, { name: 'Renamed' }));
  expect(updated).toMatchObject({ type: 'project.updated', data: { project: { id: seeded.id, name: 'Renamed' } } });

  const [vibeCreated] = await eventsOf(() => call('POST', `/api/projects/${seeded.id}/vibes`, { name: 'Second' }));
  const second = (vibeCreated!.data as { vibe: { id: string } }).vibe.id;
  expect(vibeCreated).toMatchObject({ type: 'vibe.created', data: { vibe: { name: 'Second', position: 1 } } });
  expect(await eventsOf(() => call('PUT', `/api/vibes/${second}`, { name: 'Later' }))).toMatchObject([{ type: 'vibe.updated', data: { vibe: { id: second, name: 'Later' } } }]);
  expect(await eventsOf(() => call('PUT', '/api/vibes/reorder', { vibeIds: [second, seeded.vibeId] }))).toMatchObject([
    { type: 'vibes.reordered', data: { vibeIds: [second, seeded.vibeId] } },
  ]);

  const [cutCreated] = await eventsOf(() => call('POST', `/api/vibes/${seeded.vibeId}/cuts`, { name: 'Take' }));
  const cutId = (cutCreated!.data as { cut: { id: string } }).cut.id;
  expect(cutCreated).toMatchObject({ type: 'cut.created', data: { cut: { vibeId: seeded.vibeId, name: 'Take' } } });
  expect(await eventsOf(() => call('PUT', `/api/cuts/${cutId}`, { name: 'Take 2' }))).toMatchObject([{ type: 'cut.updated', data: { cut: { id: cutId, name: 'Take 2' } } }]);
  expect(await eventsOf(() => call('PUT', `/api/cuts/${cutId}/move`, { targetVibeId: second }))).toMatchObject([
    { type: 'cut.moved', data: { cut: { id: cutId, vibeId: second }, fromVibeId: seeded.vibeId } },
  ]);
  expect(await eventsOf(() => call('DELETE', `/api/cuts/${cutId}`))).toMatchObject([{ type: 'cut.trashed', data: { cutId, vibeId: second, trashedUntil: expect.any(String) } }]);
  expect(await eventsOf(() => call('POST', `/api/trash/cut/${cutId}/restore`))).toMatchObject([{ type: 'cut.restored', data: { cutId, vibeId: second } }]);
  expect(await eventsOf(() => call('DELETE', `/api/vibes/${second}`))).toMatchObject([{ type: 'vibe.trashed', data: { vibeId: second, trashedUntil: expect.any(String) } }]);
  expect(await eventsOf(() => call('POST', `/api/trash/vibe/${second}/restore`))).toMatchObject([{ type: 'vibe.restored', data: { vibeId: second } }]);
  expect(await eventsOf(() => call('DELETE', `/api/projects/${seeded.id}/members/${member.user.id}`))).toMatchObject([
    { type: 'member.removed', data: { userId: member.user.id } },
  ]);
  expect(await eventsOf(() => call('DELETE', `/api/projects/${seeded.id}`))).toMatchObject([{ type: 'project.trashed', projectId: seeded.id, data: { projectId: seeded.id } }]);
  expect(await eventsOf(() => call('POST', `/api/trash/project/${seeded.id}/restore`))).toMatchObject([{ type: 'project.restored', projectId: seeded.id, data: { projectId: seeded.id } }]);
});

it('publishes nothing for refused or failed changes', async () => {
  const seeded = await seedProject(api, owner.accessToken);
  await addMember(api, owner.accessToken, seeded.id, member);
  const published = await eventsOf(async () => {
    await api.request('PUT', `/api/projects/${seeded.id}`, { token: member.accessToken, json: { name: 'Nope' } });
    await api.request('PUT', `/api/projects/${seeded.id}/members/${owner.user.id}`, { token: owner.accessToken, json: { role: 'MEMBER' } });
    await api.request('PUT', '/api/vibes/reorder', { token: owner.accessToken, json: { vibeIds: [] } });
  });
  expect(published).toEqual([]);
});
