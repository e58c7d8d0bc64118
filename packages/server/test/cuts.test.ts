import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Api, expectStatus, ISO_TIMESTAMP, seedProject, startWithUsers, storeFileDirectly, type User } from './authz/fixture.js';
import type { TestServer } from './support/server.js';

let server: TestServer;
let api: Api;
let owner: User;
let stranger: User;

beforeAll(async () => {
  ({ server, api, users: [owner, stranger] } = await startWithUsers('Owner', 'Stranger'));
});
afterAll(() => server?.close());

const newVibe = async (projectId: string, token = owner.accessToken) =>
  (await expectStatus(api.request('POST', `/api/projects/${projectId}/vibes`, { token, json: { name: 'Target' } }), 201)).id as string;

describe('cuts', () => {
  it('creates a cut: 201, Location, the Cut record', async () => {
    const seeded = await seedProject(api, owner.accessToken);
    const response = await api.request('POST', `/api/vibes/${seeded.vibeId}/cuts`, { token: owner.accessToken, json: { name: ' Take 2 ' } });
    expect(response.status).toBe(201);
    expect(response.headers.get('location')).toBe(`/api/cuts/${response.body.id}`);
    expect(response.body).toEqual({
      id: expect.any(String),
      vibeId: seeded.vibeId,
      projectId: seeded.id,
      name: 'Take 2',
      createdAt: expect.stringMatching(ISO_TIMESTAMP),
      updatedAt: expect.stringMatching(ISO_TIMESTAMP),
    });
  });

  it('reads a cut with its files as File records, and renames it', async () => {
    const seeded = await seedProject(api, owner.accessToken);
    const stored = await storeFileDirectly(server, seeded.cutId, owner.user.id);
    const cut = await expectStatus(api.request('GET', `/api/cuts/${seeded.cutId}`, { token: owner.accessToken }), 200);
    expect(cut.files).toEqual([
      {
        id: stored.id,
        cutId: seeded.cutId,
        name: 'take',
        type: 'CUT',
        size: 14,
        mimeType: 'audio/mpeg',
        url: `/uploads/files/${stored.id}.mp3`,
        sha256: '0'.repeat(64),
        uploadedBy: { id: owner.user.id, name: 'Owner', avatarUrl: null },
        createdAt: expect.stringMatching(ISO_TIMESTAMP),
        analysis: 'pending',
        audio: null,
        stems: null,
        series: { id: stored.id, version: 1, latest: true, count: 1 },
        path: null,
        review: { approved: 0, changesRequested: 0, openComments: 0, ready: false },
        reviewRequests: [],
        // Stored by hand, past the upload that queues a preview: none.
        preview: { status: 'none', url: null, bytes: null, durationMs: null, bitrate: null },
      },
    ]);
    const renamed = await expectStatus(api.request('PUT', `/api/cuts/${seeded.cutId}`, { token: owner.accessToken, json: { name: 'Final' } }), 200);
    const { files: _files, ...record } = cut;
    expect(renamed).toEqual({ ...record, name: 'Final', updatedAt: expect.stringMatching(ISO_TIMESTAMP) });
  });

  it.each([
    ['a missing name', {}],
    ['an empty name', { name: '' }],
    ['a name of 201 characters', { name: 'c'.repeat(201) }],
    ['a control character', { name: 'esc\u001b' }],
    ['a boolean', { name: true }],
  ])('refuses %s on create and rename with 400 VALIDATION_FAILED on name', async (_label, json) => {
    const seeded = await seedProject(api, owner.accessToken);
    for (const [method, path] of [
      ['POST', `/api/vibes/${seeded.vibeId}/cuts`],
      ['PUT', `/api/cuts/${seeded.cutId}`],
    ] as const) {
      const response = await api.request(method, path, { token: owner.accessToken, json });
      expect(response.status).toBe(400);
      expect(response.body.errors.map((e: { field: string }) => e.field)).toEqual(['name']);
    }
  });

  it('answers 404 for unknown, non-UUID and foreign cut ids', async () => {
    const theirs = await seedProject(api, stranger.accessToken);
    for (const id of [randomUUID(), 'cut', theirs.cutId]) {
      expect((await api.request('GET', `/api/cuts/${id}`, { token: owner.accessToken })).status).toBe(404);
      expect((await api.request('PUT', `/api/cuts/${id}`, { token: owner.accessToken, json: { name: 'X' } })).status).toBe(404);
      expect((await api.request('PUT', `/api/cuts/${id}/move`, { token: owner.accessToken, json: { targetVibeId: theirs.vibeId } })).status).toBe(404);
      expect((await api.request('DELETE', `/api/cuts/${id}`, { token: owner.accessToken })).status).toBe(404);
    }
    expect(await server.sql`select name from cuts where id = ${theirs.cutId} and name = 'Cut'`).toHaveLength(1);
  });
});

describe('unique names', () => {
  const create = (vibeId: string, name: string) => api.request('POST', `/api/vibes/${vibeId}/cuts`, { token: owner.accessToken, json: { name } });
  const names = async (vibeId: string) =>
    (await server.sql<{ name: string }[]>`select name from cuts where vibe_id = ${vibeId} order by created_at, id`).map((row) => row.name);

  function expectNameTaken(response: { status: number; body: { code: string; detail: string } }, detail: string) {
    expect(response.status).toBe(409);
    expect(response.body.code).toBe('NAME_TAKEN');
    expect(response.body.detail).toBe(detail);
  }

  it('refuses a second cut of the same name in a vibe, whatever its case and spaces; another vibe may have one', async () => {
    const seeded = await seedProject(api, owner.accessToken);
    for (const name of ['Cut', 'cut', ' CUT  ']) {
      expectNameTaken(await create(seeded.vibeId, name), `A cut named "${name.trim()}" already exists in this vibe`);
    }
    expect(await names(seeded.vibeId)).toEqual(['Cut']);
    await expectStatus(create(await newVibe(seeded.id), 'Cut'), 201);
  });

  it('refuses renaming a cut to another cut’s name, and lets a cut change the case of its own', async () => {
    const seeded = await seedProject(api, owner.accessToken);
    const second = await expectStatus(create(seeded.vibeId, 'Second'), 201);
    const response = await api.request('PUT', `/api/cuts/${second.id}`, { token: owner.accessToken, json: { name: 'cut ' } });
    expectNameTaken(response, 'A cut named "cut" already exists in this vibe');
    expect(await names(seeded.vibeId)).toEqual(['Cut', 'Second']);
    await expectStatus(api.request('PUT', `/api/cuts/${second.id}`, { token: owner.accessToken, json: { name: 'SECOND' } }), 200);
  });

  it('refuses moving a cut into a vibe that has a cut of its name; the cut stays where it was', async () => {
    const seeded = await seedProject(api, owner.accessToken);
    const target = await newVibe(seeded.id);
    await expectStatus(create(target, 'CUT'), 201);
    const response = await api.request('PUT', `/api/cuts/${seeded.cutId}/move`, { token: owner.accessToken, json: { targetVibeId: target } });
    expectNameTaken(response, 'The target vibe already has a cut of this name; rename one of them first');
    expect(await names(seeded.vibeId)).toEqual(['Cut']);
    expect(await names(target)).toEqual(['CUT']);
  });

  it('lets one of several parallel creates of a name through and answers the rest 409', async () => {
    const seeded = await seedProject(api, owner.accessToken);
    const responses = await Promise.all(Array.from({ length: 6 }, (_, i) => create(seeded.vibeId, i % 2 === 0 ? 'Take' : 'TAKE')));
    expect(responses.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409, 409]);
    for (const response of responses.filter((r) => r.status === 409)) expect(response.body.code).toBe('NAME_TAKEN');
    expect(await names(seeded.vibeId)).toHaveLength(2);
  });
});

describe('move', () => {
  it('moves a cut to another vibe of its project, files and all', async () => {
    const seeded = await seedProject(api, owner.accessToken);
    const target = await newVibe(seeded.id);
    await storeFileDirectly(server, seeded.cutId, owner.user.id);
    const moved = await api.request('PUT', `/api/cuts/${seeded.cutId}/move`, { token: owner.accessToken, json: { targetVibeId: target } });
    expect(moved.status).toBe(200);
    expect(moved.body).toMatchObject({ id: seeded.cutId, vibeId: target, projectId: seeded.id });
    const vibe = await expectStatus(api.request('GET', `/api/vibes/${target}`, { token: owner.accessToken }), 200);
    expect(vibe.cuts.map((c: { id: string; files: unknown[] }) => [c.id, c.files.length])).toEqual([[seeded.cutId, 1]]);
  });

  it('lists a moved cut among the target vibe’s cuts by creation, oldest first', async () => {
    const seeded = await seedProject(api, owner.accessToken);
    const target = await newVibe(seeded.id);
    const newer = await expectStatus(api.request('POST', `/api/vibes/${target}/cuts`, { token: owner.accessToken, json: { name: 'Newer' } }), 201);
    await expectStatus(api.request('PUT', `/api/cuts/${seeded.cutId}/move`, { token: owner.accessToken, json: { targetVibeId: target } }), 200);
    const vibe = await expectStatus(api.request('GET', `/api/vibes/${target}`, { token: owner.accessToken }), 200);
    expect(vibe.cuts.map((c: { id: string }) => c.id)).toEqual([seeded.cutId, newer.id]);
    const detail = await expectStatus(api.request('GET', `/api/projects/${seeded.id}`, { token: owner.accessToken }), 200);
    expect(detail.vibes.map((v: { cuts: { id: string }[] }) => v.cuts.map((c) => c.id))).toEqual([[], [seeded.cutId, newer.id]]);
  });

  it('refuses a vibe of another of the caller’s projects with 400 CROSS_PROJECT_MOVE', async () => {
    const seeded = await seedProject(api, owner.accessToken);
    const other = await seedProject(api, owner.accessToken);
    const response = await api.request('PUT', `/api/cuts/${seeded.cutId}/move`, { token: owner.accessToken, json: { targetVibeId: other.vibeId } });
    expect(response.status).toBe(400);
    expect(response.body.code).toBe('CROSS_PROJECT_MOVE');
    const [row] = await server.sql`select vibe_id from cuts where id = ${seeded.cutId}`;
    expect(row!.vibe_id).toBe(seeded.vibeId);
  });

  it('answers 404 for a target vibe the caller cannot see, or that does not exist', async () => {
    const seeded = await seedProject(api, owner.accessToken);
    const foreign = await seedProject(api, stranger.accessToken);
    for (const targetVibeId of [foreign.vibeId, randomUUID()]) {
      const response = await api.request('PUT', `/api/cuts/${seeded.cutId}/move`, { token: owner.accessToken, json: { targetVibeId } });
      expect(response.status).toBe(404);
    }
  });

  it('refuses a missing or malformed targetVibeId with 400 VALIDATION_FAILED', async () => {
    const seeded = await seedProject(api, owner.accessToken);
    for (const json of [{}, { targetVibeId: 'vibe' }, { targetVibeId: 5 }]) {
      const response = await api.request('PUT', `/api/cuts/${seeded.cutId}/move`, { token: owner.accessToken, json });
      expect(response.status).toBe(400);
      expect(response.body.errors[0].field).toBe('targetVibeId');
    }
  });

  it('cannot put a cut under another project’s vibe even past the service: the database refuses it', async () => {
    const seeded = await seedProject(api, owner.accessToken);
    const other = await seedProject(api, owner.accessToken);
    // A name the target vibe does not have, so only the project rule can refuse the move.
    await expect(server.sql`update cuts set vibe_id = ${other.vibeId}, name = 'Moved' where id = ${seeded.cutId}`).rejects.toThrow(/foreign key/);
  });
});
