import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMember, type Api, expectStatus, ISO_TIMESTAMP, seedProject, startWithUsers, type User } from './authz/fixture.js';
import type { TestServer } from './support/server.js';

let server: TestServer;
let api: Api;
let owner: User;
let member: User;
let stranger: User;

beforeAll(async () => {
  ({ server, api, users: [owner, member, stranger] } = await startWithUsers('Owner', 'Member', 'Stranger'));
});
afterAll(() => server?.close());

async function projectWithVibes(count: number, token = owner.accessToken) {
  const project = await expectStatus(api.request('POST', '/api/projects', { token, json: { name: 'Vibes' } }), 201);
  const vibeIds: string[] = [];
  for (let i = 0; i < count; i++) {
    vibeIds.push((await expectStatus(api.request('POST', `/api/projects/${project.id}/vibes`, { token, json: { name: `Vibe ${i}` } }), 201)).id);
  }
  return { projectId: project.id as string, vibeIds };
}

const reorder = (vibeIds: unknown, token = owner.accessToken) => api.request('PUT', '/api/vibes/reorder', { token, json: { vibeIds } });
const positions = async (projectId: string) =>
  (await server.sql<{ id: string; position: number }[]>`select id, position from live.vibes where project_id = ${projectId} order by position`).map((row) => row.id);

describe('create, read, update', () => {
  it('creates vibes last in line: 201, Location, the Vibe record', async () => {
    const { projectId, vibeIds } = await projectWithVibes(2);
    const response = await api.request('POST', `/api/projects/${projectId}/vibes`, { token: owner.accessToken, json: { name: ' Third ' } });
    expect(response.status).toBe(201);
    expect(response.headers.get('location')).toBe(`/api/vibes/${response.body.id}`);
    expect(response.body).toEqual({
      id: expect.any(String),
      projectId,
      name: 'Third',
      imageUrl: null,
      position: 2,
      createdAt: expect.stringMatching(ISO_TIMESTAMP),
      updatedAt: expect.stringMatching(ISO_TIMESTAMP),
    });
    expect(await positions(projectId)).toEqual([...vibeIds, response.body.id]);
  });

  it('gives concurrent creates distinct positions 0…n-1', async () => {
    const { projectId } = await projectWithVibes(0);
    const created = await Promise.all(
      Array.from({ length: 8 }, (_, i) => api.request('POST', `/api/projects/${projectId}/vibes`, { token: owner.accessToken, json: { name: `V${i}` } })),
    );
    expect(created.map((r) => r.status)).toEqual(Array(8).fill(201));
    expect(created.map((r) => r.body.position).sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
  });

  it('reads a vibe with its cuts oldest first, and renames it', async () => {
    const seeded = await seedProject(api, owner.accessToken);
    const later = await expectStatus(api.request('POST', `/api/vibes/${seeded.vibeId}/cuts`, { token: owner.accessToken, json: { name: 'Later' } }), 201);
    const vibe = await expectStatus(api.request('GET', `/api/vibes/${seeded.vibeId}`, { token: owner.accessToken }), 200);
    expect(vibe).toMatchObject({ id: seeded.vibeId, projectId: seeded.id, name: 'Vibe', position: 0 });
    expect(vibe.cuts.map((c: { id: string }) => c.id)).toEqual([seeded.cutId, later.id]);
    expect(vibe.cuts[0].files).toEqual([]);

    const renamed = await expectStatus(api.request('PUT', `/api/vibes/${seeded.vibeId}`, { token: owner.accessToken, json: { name: 'Renamed', image: null } }), 200);
    const { cuts: _cuts, ...record } = vibe;
    expect(renamed).toEqual({ ...record, name: 'Renamed', updatedAt: expect.stringMatching(ISO_TIMESTAMP) });
  });

  it.each([
    ['a missing name', {}],
    ['a blank name', { name: ' ' }],
    ['a name of 201 characters', { name: 'v'.repeat(201) }],
    ['a control character', { name: 'a\u0000b' }],
    ['a number', { name: 3 }],
  ])('refuses %s on create with 400 VALIDATION_FAILED on name', async (_label, json) => {
    const { projectId } = await projectWithVibes(0);
    const response = await api.request('POST', `/api/projects/${projectId}/vibes`, { token: owner.accessToken, json });
    expect(response.status).toBe(400);
    expect(response.body.errors.map((e: { field: string }) => e.field)).toEqual(['name']);
  });

  it.each([
    ['a blank name', { name: '' }, 'name'],
    ['a name of 201 characters', { name: 'v'.repeat(201) }, 'name'],
    ['an image that is not null', { image: 'x.png' }, 'image'],
  ])('refuses %s on update', async (_label, json, field) => {
    const { vibeIds } = await projectWithVibes(1);
    const response = await api.request('PUT', `/api/vibes/${vibeIds[0]}`, { token: owner.accessToken, json });
    expect(response.status).toBe(400);
    expect(response.body.errors.map((e: { field: string }) => e.field)).toEqual([field]);
  });

  it('answers 404 for unknown, non-UUID and foreign vibe ids', async () => {
    const { vibeIds } = await projectWithVibes(1, stranger.accessToken);
    for (const id of [randomUUID(), 'nope', vibeIds[0]]) {
      expect((await api.request('GET', `/api/vibes/${id}`, { token: owner.accessToken })).status).toBe(404);
      expect((await api.request('PUT', `/api/vibes/${id}`, { token: owner.accessToken, json: { name: 'X' } })).status).toBe(404);
      expect((await api.request('DELETE', `/api/vibes/${id}`, { token: owner.accessToken })).status).toBe(404);
      expect((await api.request('POST', `/api/vibes/${id}/cuts`, { token: owner.accessToken, json: { name: 'X' } })).status).toBe(404);
    }
    for (const projectId of [randomUUID(), 'not-a-uuid']) {
      expect((await api.request('POST', `/api/projects/${projectId}/vibes`, { token: owner.accessToken, json: { name: 'X' } })).status).toBe(404);
    }
  });
});

describe('unique names', () => {
  const create = (projectId: string, name: string) =>
    api.request('POST', `/api/projects/${projectId}/vibes`, { token: owner.accessToken, json: { name } });
  const rename = (vibeId: string, name: string) => api.request('PUT', `/api/vibes/${vibeId}`, { token: owner.accessToken, json: { name } });
  const names = async (projectId: string) =>
    (await server.sql<{ name: string }[]>`select name from live.vibes where project_id = ${projectId} order by position`).map((row) => row.name);

  function expectNameTaken(response: { status: number; body: { code: string; detail: string } }, detail: string) {
    expect(response.status).toBe(409);
    expect(response.body.code).toBe('NAME_TAKEN');
    expect(response.body.detail).toBe(detail);
  }

  it('refuses a second vibe of the same name in a project, whatever its case and spaces, with 409 NAME_TAKEN', async () => {
    const { projectId } = await projectWithVibes(0);
    await expectStatus(create(projectId, 'Intro'), 201);
    for (const name of ['Intro', 'intro', '  INTRO ']) {
      expectNameTaken(await create(projectId, name), `A vibe named "${name.trim()}" already exists in this project`);
    }
    expect(await names(projectId)).toEqual(['Intro']);
    const other = await projectWithVibes(0);
    await expectStatus(create(other.projectId, 'Intro'), 201);
  });

  it('refuses renaming a vibe to another vibe’s name, and lets a vibe change the case of its own', async () => {
    const { projectId, vibeIds } = await projectWithVibes(2);
    expectNameTaken(await rename(vibeIds[1]!, ' vibe 0'), 'A vibe named "vibe 0" already exists in this project');
    const form = new FormData();
    form.append('name', 'VIBE 0');
    expectNameTaken(await api.request('PUT', `/api/vibes/${vibeIds[1]}`, { token: owner.accessToken, body: form }), 'A vibe named "VIBE 0" already exists in this project');
    expect(await names(projectId)).toEqual(['Vibe 0', 'Vibe 1']);
    expect((await expectStatus(rename(vibeIds[0]!, 'VIBE 0'), 200)).name).toBe('VIBE 0');
  });

  it('lets one of several parallel creates of a name through and answers the rest 409', async () => {
    const { projectId } = await projectWithVibes(0);
    const responses = await Promise.all(Array.from({ length: 6 }, (_, i) => create(projectId, i % 2 === 0 ? 'Chorus' : 'chorus')));
    expect(responses.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409, 409]);
    for (const response of responses.filter((r) => r.status === 409)) expect(response.body.code).toBe('NAME_TAKEN');
    expect(await names(projectId)).toHaveLength(1);
  });
});

describe('reorder', () => {
  it('puts the vibes in the given order, positions 0…n-1, and is not taken for PUT /api/vibes/:id', async () => {
    const { projectId, vibeIds } = await projectWithVibes(3);
    const [a, b, c] = vibeIds as [string, string, string];
    await addMember(api, owner.accessToken, projectId, member);
    const response = await reorder([c, a, b], member.accessToken);
    expect(response.status).toBe(200);
    expect(response.body.projectId).toBe(projectId);
    expect(response.body.vibes.map((v: { id: string; position: number }) => [v.id, v.position])).toEqual([
      [c, 0],
      [a, 1],
      [b, 2],
    ]);
    expect(await positions(projectId)).toEqual([c, a, b]);
  });

  it('takes ids in any letter case, and a repeat in another case is still a duplicate', async () => {
    const { projectId, vibeIds } = await projectWithVibes(2);
    const [a, b] = vibeIds as [string, string];
    const response = await reorder([b.toUpperCase(), a]);
    expect(response.status).toBe(200);
    expect(response.body.vibes.map((v: { id: string }) => v.id)).toEqual([b, a]);
    expect(await positions(projectId)).toEqual([b, a]);
    expect((await reorder([a, a.toUpperCase(), b])).status).toBe(400);
  });

  it('answers 404 for a list that still names a vibe deleted meanwhile', async () => {
    const { projectId, vibeIds } = await projectWithVibes(3);
    await expectStatus(api.request('DELETE', `/api/vibes/${vibeIds[1]}`, { token: owner.accessToken }), 200);
    const stale = await reorder([...vibeIds].reverse());
    expect(stale.status).toBe(404);
    expect(stale.body.code).toBe('NOT_FOUND');
    expect(await positions(projectId)).toEqual([vibeIds[0], vibeIds[2]]);
  });

  it('refuses an empty list, duplicates and non-UUIDs with 400', async () => {
    const { vibeIds } = await projectWithVibes(2);
    for (const body of [[], [vibeIds[0], vibeIds[0], vibeIds[1]], ['not-a-uuid'], 'x', null]) {
      const response = await reorder(body);
      expect(response.status).toBe(400);
      expect(response.body.code).toBe('VALIDATION_FAILED');
    }
    expect((await api.request('PUT', '/api/vibes/reorder', { token: owner.accessToken, json: {} })).status).toBe(400);
  });

  it('answers 404 for an unknown id and for a vibe of a project the caller is not in', async () => {
    const mine = await projectWithVibes(2);
    const theirs = await projectWithVibes(1, stranger.accessToken);
    expect((await reorder([...mine.vibeIds, randomUUID()])).status).toBe(404);
    const foreign = await reorder([...mine.vibeIds, ...theirs.vibeIds]);
    expect(foreign.status).toBe(404);
    expect(foreign.body.code).toBe('NOT_FOUND');
    expect((await reorder(theirs.vibeIds)).status).toBe(404);
    expect(await positions(theirs.projectId)).toEqual(theirs.vibeIds);
  });

  it('refuses ids of two of the caller’s projects with 400', async () => {
    const first = await projectWithVibes(1);
    const second = await projectWithVibes(1);
    const response = await reorder([...first.vibeIds, ...second.vibeIds]);
    expect(response.status).toBe(400);
    expect(response.body.errors[0].field).toBe('vibeIds');
  });

  it('answers 409 ORDER_CONFLICT for a set that is not the project’s current one', async () => {
    const { projectId, vibeIds } = await projectWithVibes(3);
    const missingOne = await reorder(vibeIds.slice(1));
    expect(missingOne.status).toBe(409);
    expect(missingOne.body.code).toBe('ORDER_CONFLICT');
    expect(await positions(projectId)).toEqual(vibeIds);
  });

  it('keeps positions 0…n-1 without duplicates under concurrent reorders, creates and deletes', async () => {
    const { projectId, vibeIds } = await projectWithVibes(6);
    const shuffled = (ids: string[]) => [...ids].sort(() => Math.random() - 0.5);
    const [created, deleted, ...reorders] = await Promise.all([
      api.request('POST', `/api/projects/${projectId}/vibes`, { token: owner.accessToken, json: { name: 'Late' } }),
      api.request('DELETE', `/api/vibes/${vibeIds[5]}`, { token: owner.accessToken }),
      ...Array.from({ length: 10 }, () => reorder(shuffled(vibeIds))),
    ]);
    expect([created!.status, deleted!.status]).toEqual([201, 200]);
    // A reorder that runs after the delete names a vibe that is gone (404); one that runs after the create
    // leaves out the new vibe (409 ORDER_CONFLICT).
    for (const result of reorders) expect([200, 404, 409]).toContain(result.status);
    const rows = await server.sql<{ position: number }[]>`select position from live.vibes where project_id = ${projectId} order by position`;
    expect(rows.map((row) => row.position)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(new Set(await positions(projectId)).size).toBe(6);
  });
});

describe('delete', () => {
  it('moves the vibe with its cuts to the trash, and the others close ranks; a restore puts it back in its place', async () => {
    const { projectId, vibeIds } = await projectWithVibes(3);
    const cut = await expectStatus(api.request('POST', `/api/vibes/${vibeIds[1]}/cuts`, { token: owner.accessToken, json: { name: 'Gone' } }), 201);
    const response = await api.request('DELETE', `/api/vibes/${vibeIds[1]}`, { token: owner.accessToken });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ id: vibeIds[1], deleted: true, trashedUntil: expect.stringMatching(/Z$/) });
    expect(await positions(projectId)).toEqual([vibeIds[0], vibeIds[2]]);
    const rows = await server.sql`select position from live.vibes where project_id = ${projectId} order by position`;
    expect(rows.map((row) => row.position)).toEqual([0, 1]);
    expect(await server.sql`select 1 from live.cuts where id = ${cut.id}`).toHaveLength(0);
    expect((await api.request('GET', `/api/cuts/${cut.id}`, { token: owner.accessToken })).status).toBe(404);
    await expectStatus(api.request('POST', `/api/trash/vibe/${vibeIds[1]}/restore`, { token: owner.accessToken }), 200);
    expect(await positions(projectId)).toEqual(vibeIds);
    expect((await api.request('GET', `/api/cuts/${cut.id}`, { token: owner.accessToken })).status).toBe(200);
  });
});
