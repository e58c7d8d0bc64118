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

const createProject = (token: string, json: unknown) => api.request('POST', '/api/projects', { token, json });

describe('create and list', () => {
  it('creates a project from JSON: 201, Location, the list item with the caller as ADMIN', async () => {
    const response = await createProject(owner.accessToken, { name: '  Night Drive  ', description: 'Second album' });
    expect(response.status).toBe(201);
    expect(response.headers.get('location')).toBe(`/api/projects/${response.body.id}`);
    expect(response.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: 'Night Drive',
      description: 'Second album',
      imageUrl: null,
      createdAt: expect.stringMatching(ISO_TIMESTAMP),
      memberCount: 1,
      role: 'ADMIN',
      reviewPolicy: { approvals: 1, noOpenComments: true },
    });
  });

  it('stores an absent or empty description as null', async () => {
    expect((await createProject(owner.accessToken, { name: 'No description' })).body.description).toBeNull();
    expect((await createProject(owner.accessToken, { name: 'Empty', description: '' })).body.description).toBeNull();
  });

  it('lists only the caller’s projects, newest first, with their own role and the member count', async () => {
    const viewer = await api.register();
    const older = await expectStatus(createProject(owner.accessToken, { name: 'Older' }), 201);
    const newer = await expectStatus(createProject(viewer.accessToken, { name: 'Newer' }), 201);
    await addMember(api, owner.accessToken, older.id, viewer);
    await expectStatus(createProject(stranger.accessToken, { name: 'Not theirs' }), 201);

    const list = await expectStatus(api.request('GET', '/api/projects', { token: viewer.accessToken }), 200);
    expect(list.map((p: { name: string }) => p.name)).toEqual(['Newer', 'Older']);
    expect(list[0]).toMatchObject({ id: newer.id, role: 'ADMIN', memberCount: 1 });
    expect(list[1]).toMatchObject({ id: older.id, role: 'MEMBER', memberCount: 2 });
    expect(Object.keys(list[1]).sort()).toEqual(['createdAt', 'description', 'id', 'imageUrl', 'memberCount', 'name', 'reviewPolicy', 'role']);
  });
});

describe('detail', () => {
  it('holds members, vibes by position with their cuts oldest first, and the pending invitations for an ADMIN', async () => {
    const seeded = await seedProject(api, owner.accessToken, 'Detailed');
    await addMember(api, owner.accessToken, seeded.id, member);
    const second = await expectStatus(api.request('POST', `/api/projects/${seeded.id}/vibes`, { token: owner.accessToken, json: { name: 'Second' } }), 201);
    const laterCut = await expectStatus(api.request('POST', `/api/vibes/${seeded.vibeId}/cuts`, { token: member.accessToken, json: { name: 'Later' } }), 201);
    await expectStatus(api.request('PUT', '/api/vibes/reorder', { token: owner.accessToken, json: { vibeIds: [second.id, seeded.vibeId] } }), 200);
    const invited = await expectStatus(
      api.request('POST', `/api/projects/${seeded.id}/invite`, { token: owner.accessToken, json: { email: 'pending@example.com', role: 'ADMIN' } }),
      201,
    );

    const detail = await expectStatus(api.request('GET', `/api/projects/${seeded.id}`, { token: owner.accessToken }), 200);
    expect(detail).toMatchObject({ id: seeded.id, name: 'Detailed', role: 'ADMIN', memberCount: 2, description: null, imageUrl: null });
    expect(detail.updatedAt).toMatch(ISO_TIMESTAMP);
    expect(detail.members).toEqual([
      { userId: owner.user.id, email: owner.user.email, name: 'Owner', avatarUrl: null, role: 'ADMIN', joinedAt: expect.stringMatching(ISO_TIMESTAMP) },
      { userId: member.user.id, email: member.user.email, name: 'Member', avatarUrl: null, role: 'MEMBER', joinedAt: expect.stringMatching(ISO_TIMESTAMP) },
    ]);
    expect(detail.vibes.map((v: { id: string; position: number }) => [v.id, v.position])).toEqual([
      [second.id, 0],
      [seeded.vibeId, 1],
    ]);
    expect(detail.vibes[0].cuts).toEqual([]);
    expect(detail.vibes[1].cuts.map((c: { id: string }) => c.id)).toEqual([seeded.cutId, laterCut.id]);
    expect(detail.vibes[1].cuts[0]).toEqual({
      id: seeded.cutId,
      vibeId: seeded.vibeId,
      projectId: seeded.id,
      name: 'Cut',
      createdAt: expect.stringMatching(ISO_TIMESTAMP),
      updatedAt: expect.stringMatching(ISO_TIMESTAMP),
      files: [],
    });
    expect(detail.invitations).toEqual([invited.invitation]);
    expect(Object.keys(detail).sort()).toEqual(
      ['createdAt', 'description', 'id', 'imageUrl', 'invitations', 'memberCount', 'members', 'name', 'reviewPolicy', 'role', 'updatedAt', 'vibes'],
    );
    expect(Object.keys(detail.vibes[0]).sort()).toEqual(['createdAt', 'cuts', 'id', 'imageUrl', 'name', 'position', 'projectId', 'updatedAt']);

    const asMember = await expectStatus(api.request('GET', `/api/projects/${seeded.id}`, { token: member.accessToken }), 200);
    expect(asMember.role).toBe('MEMBER');
    expect(asMember.invitations).toEqual([]);
  });

  it('answers 404 for an unknown id, a non-UUID id, and a project of others', async () => {
    const theirs = await expectStatus(createProject(stranger.accessToken, { name: 'Theirs' }), 201);
    for (const id of [randomUUID(), 'not-a-uuid', '1', theirs.id]) {
      const response = await api.request('GET', `/api/projects/${id}`, { token: owner.accessToken });
      expect(response.status).toBe(404);
      expect(response.body.code).toBe('NOT_FOUND');
    }
  });
});

describe('update', () => {
  it('changes name and description (null clears) and answers the list item with updatedAt', async () => {
    const project = await expectStatus(createProject(owner.accessToken, { name: 'Before', description: 'Old' }), 201);
    const renamed = await expectStatus(
      api.request('PUT', `/api/projects/${project.id}`, { token: owner.accessToken, json: { name: ' After ' } }),
      200,
    );
    expect(renamed).toEqual({ ...project, name: 'After', updatedAt: expect.stringMatching(ISO_TIMESTAMP) });
    const cleared = await expectStatus(
      api.request('PUT', `/api/projects/${project.id}`, { token: owner.accessToken, json: { description: null, image: null } }),
      200,
    );
    expect(cleared).toMatchObject({ name: 'After', description: null, imageUrl: null });
  });

  it('refuses a MEMBER with 403 and a stranger with 404, changing nothing', async () => {
    const seeded = await seedProject(api, owner.accessToken, 'Guarded');
    await addMember(api, owner.accessToken, seeded.id, member);
    expect((await api.request('PUT', `/api/projects/${seeded.id}`, { token: member.accessToken, json: { name: 'X' } })).status).toBe(403);
    expect((await api.request('PUT', `/api/projects/${seeded.id}`, { token: stranger.accessToken, json: { name: 'X' } })).status).toBe(404);
    const [row] = await server.sql`select name from projects where id = ${seeded.id}`;
    expect(row!.name).toBe('Guarded');
  });
});

describe('validation', () => {
  const name = (value: unknown) => ({ name: value });
  it.each([
    ['a missing name', {}, 'name'],
    ['an empty name', name(''), 'name'],
    ['a blank name', name('   '), 'name'],
    ['a name of 201 characters', name('x'.repeat(201)), 'name'],
    ['a name with a control character', name('tab\there'), 'name'],
    ['a name with a newline', name('two\nlines'), 'name'],
    ['a name that is not a string', name(42), 'name'],
    ['a null name', name(null), 'name'],
    ['a description of 2001 characters', { name: 'X', description: 'd'.repeat(2001) }, 'description'],
    ['a description that is not a string', { name: 'X', description: 7 }, 'description'],
  ])('POST /api/projects refuses %s with 400 VALIDATION_FAILED', async (_label, json, field) => {
    const response = await createProject(owner.accessToken, json);
    expect(response.status).toBe(400);
    expect(response.body.code).toBe('VALIDATION_FAILED');
    expect(response.body.errors.map((e: { field: string }) => e.field)).toEqual([field]);
  });

  it('accepts the boundaries: 200-character names, 2000-character descriptions', async () => {
    const response = await createProject(owner.accessToken, { name: 'n'.repeat(200), description: 'd'.repeat(2000) });
    expect(response.status).toBe(201);
    expect(response.body.name).toHaveLength(200);
  });

  it.each([
    ['an empty name', { name: '' }, 'name'],
    ['a name of 201 characters', { name: 'x'.repeat(201) }, 'name'],
    ['a control character', { name: 'bell\u0007' }, 'name'],
    ['a description of 2001 characters', { description: 'd'.repeat(2001) }, 'description'],
    ['an image that is not null', { image: 'cover.png' }, 'image'],
  ])('PUT /api/projects/:id refuses %s', async (_label, json, field) => {
    const project = await expectStatus(createProject(owner.accessToken, { name: 'Valid' }), 201);
    const response = await api.request('PUT', `/api/projects/${project.id}`, { token: owner.accessToken, json });
    expect(response.status).toBe(400);
    expect(response.body.errors.map((e: { field: string }) => e.field)).toEqual([field]);
  });

  it.each([
    ['a malformed email', { email: 'not-an-email', role: 'MEMBER' }, 'email'],
    ['a missing email', { role: 'MEMBER' }, 'email'],
    ['an unknown role', { email: 'x@example.com', role: 'OWNER' }, 'role'],
    ['a missing role', { email: 'x@example.com' }, 'role'],
    ['a lower-case role', { email: 'x@example.com', role: 'admin' }, 'role'],
  ])('POST /api/projects/:id/invite refuses %s', async (_label, json, field) => {
    const project = await expectStatus(createProject(owner.accessToken, { name: 'Invites' }), 201);
    const response = await api.request('POST', `/api/projects/${project.id}/invite`, { token: owner.accessToken, json });
    expect(response.status).toBe(400);
    expect(response.body.errors.map((e: { field: string }) => e.field)).toEqual([field]);
  });

  it('PUT /api/projects/:id/members/:userId refuses a bad role', async () => {
    const project = await expectStatus(createProject(owner.accessToken, { name: 'Roles' }), 201);
    for (const json of [{}, { role: 'OWNER' }, { role: 1 }]) {
      const response = await api.request('PUT', `/api/projects/${project.id}/members/${owner.user.id}`, { token: owner.accessToken, json });
      expect(response.status).toBe(400);
      expect(response.body.errors[0].field).toBe('role');
    }
  });

  it('answers a JSON body over 1 MiB with 413 PAYLOAD_TOO_LARGE', async () => {
    const response = await createProject(owner.accessToken, { name: 'Big', description: 'd'.repeat(1024 * 1024) });
    expect(response.status).toBe(413);
    expect(response.body.code).toBe('PAYLOAD_TOO_LARGE');
  });

  it('answers malformed JSON with 400 INVALID_JSON and another content type with 415', async () => {
    const malformed = await api.request('POST', '/api/projects', {
      token: owner.accessToken,
      body: '{"name":',
      headers: { 'content-type': 'application/json' },
    });
    expect(malformed.status).toBe(400);
    expect(malformed.body.code).toBe('INVALID_JSON');
    const text = await api.request('POST', '/api/projects', { token: owner.accessToken, body: 'name=x', headers: { 'content-type': 'text/plain' } });
    expect(text.status).toBe(415);
  });
});

describe('JSON bodies of every §4 and §5 endpoint', () => {
  it('answers malformed JSON 400 INVALID_JSON, another content type 415, over 1 MiB 413, changing nothing', async () => {
    const seeded = await seedProject(api, owner.accessToken, 'Bodies');
    const endpoints: [string, string][] = [
      ['POST', '/api/projects'],
      ['PUT', `/api/projects/${seeded.id}`],
      ['POST', `/api/projects/${seeded.id}/invite`],
      ['PUT', `/api/projects/${seeded.id}/members/${owner.user.id}`],
      ['POST', `/api/projects/${seeded.id}/vibes`],
      ['PUT', `/api/vibes/${seeded.vibeId}`],
      ['PUT', '/api/vibes/reorder'],
      ['POST', `/api/vibes/${seeded.vibeId}/cuts`],
      ['PUT', `/api/cuts/${seeded.cutId}`],
      ['PUT', `/api/cuts/${seeded.cutId}/move`],
    ];
    const json = { 'content-type': 'application/json' };
    for (const [method, path] of endpoints) {
      const label = `${method} ${path}`;
      const malformed = await api.request(method, path, { token: owner.accessToken, body: '{"name": "x"', headers: json });
      expect([malformed.status, malformed.body.code], label).toEqual([400, 'INVALID_JSON']);
      const text = await api.request(method, path, { token: owner.accessToken, body: 'name=x', headers: { 'content-type': 'text/plain' } });
      expect([text.status, text.body.code], label).toEqual([415, 'UNSUPPORTED_MEDIA_TYPE']);
      const large = await api.request(method, path, { token: owner.accessToken, json: { name: 'x'.repeat(1024 * 1024) } });
      expect([large.status, large.body.code], label).toEqual([413, 'PAYLOAD_TOO_LARGE']);
    }
    const [project] = await server.sql`select name from projects where id = ${seeded.id}`;
    expect(project!.name).toBe('Bodies');
  });
});

describe('members', () => {
  it('changes roles, protects the last ADMIN from demotion and removal, and lets members leave', async () => {
    const project = await expectStatus(createProject(owner.accessToken, { name: 'Roles' }), 201);
    const path = (userId: string) => `/api/projects/${project.id}/members/${userId}`;
    await addMember(api, owner.accessToken, project.id, member);

    const demoteLast = await api.request('PUT', path(owner.user.id), { token: owner.accessToken, json: { role: 'MEMBER' } });
    expect(demoteLast.status).toBe(409);
    expect(demoteLast.body.code).toBe('LAST_ADMIN');
    const leaveLast = await api.request('DELETE', path(owner.user.id), { token: owner.accessToken });
    expect(leaveLast.body.code).toBe('LAST_ADMIN');

    const promoted = await api.request('PUT', path(member.user.id), { token: owner.accessToken, json: { role: 'ADMIN' } });
    expect(promoted.status).toBe(200);
    expect(promoted.body).toMatchObject({ userId: member.user.id, role: 'ADMIN', email: member.user.email });
    // Two ADMINs now: the owner may step down, and then the promoted member is the last one.
    expect((await api.request('PUT', path(owner.user.id), { token: owner.accessToken, json: { role: 'MEMBER' } })).body.role).toBe('MEMBER');
    expect((await api.request('PUT', path(member.user.id), { token: owner.accessToken, json: { role: 'MEMBER' } })).status).toBe(403);
    expect((await api.request('DELETE', path(member.user.id), { token: member.accessToken })).body.code).toBe('LAST_ADMIN');

    const left = await api.request('DELETE', path(owner.user.id), { token: owner.accessToken });
    expect(left.status).toBe(200);
    expect(left.body).toEqual({ id: owner.user.id, deleted: true });
    expect((await api.request('GET', `/api/projects/${project.id}`, { token: owner.accessToken })).status).toBe(404);
  });

  it('lets an ADMIN remove a member, who then sees nothing of the project; unknown members are 404', async () => {
    const seeded = await seedProject(api, owner.accessToken, 'Removal');
    const leaving = await api.register();
    await addMember(api, owner.accessToken, seeded.id, leaving);
    const removed = await api.request('DELETE', `/api/projects/${seeded.id}/members/${leaving.user.id}`, { token: owner.accessToken });
    expect(removed.body).toEqual({ id: leaving.user.id, deleted: true });
    expect((await api.request('GET', `/api/vibes/${seeded.vibeId}`, { token: leaving.accessToken })).status).toBe(404);
    for (const userId of [leaving.user.id, randomUUID(), stranger.user.id]) {
      const response = await api.request('DELETE', `/api/projects/${seeded.id}/members/${userId}`, { token: owner.accessToken });
      expect(response.status).toBe(404);
      expect((await api.request('PUT', `/api/projects/${seeded.id}/members/${userId}`, { token: owner.accessToken, json: { role: 'ADMIN' } })).status).toBe(404);
    }
    expect((await api.request('DELETE', `/api/projects/${seeded.id}/members/not-a-uuid`, { token: owner.accessToken })).status).toBe(404);
  });

  it('never leaves a project without an ADMIN when two ADMINs demote each other at once', async () => {
    const project = await expectStatus(createProject(owner.accessToken, { name: 'Race' }), 201);
    await addMember(api, owner.accessToken, project.id, member, 'ADMIN');
    const results = await Promise.all([
      api.request('PUT', `/api/projects/${project.id}/members/${member.user.id}`, { token: owner.accessToken, json: { role: 'MEMBER' } }),
      api.request('PUT', `/api/projects/${project.id}/members/${owner.user.id}`, { token: member.accessToken, json: { role: 'MEMBER' } }),
    ]);
    // Serialised by the project lock: the second change finds its caller demoted already.
    expect(results.map((r) => r.status).sort()).toEqual([200, 403]);
    const [row] = await server.sql`select count(*)::int as admins from project_members where project_id = ${project.id} and role = 'ADMIN'`;
    expect(row!.admins).toBe(1);
  });

  it('refuses an invitation from a MEMBER with 403 and into a project of others with 404', async () => {
    const seeded = await seedProject(api, owner.accessToken, 'Closed');
    await addMember(api, owner.accessToken, seeded.id, member);
    const json = { email: `friend-${randomUUID()}@example.com`, role: 'ADMIN' };
    expect((await api.request('POST', `/api/projects/${seeded.id}/invite`, { token: member.accessToken, json })).status).toBe(403);
    expect((await api.request('POST', `/api/projects/${seeded.id}/invite`, { token: stranger.accessToken, json })).status).toBe(404);
    expect(await server.sql`select 1 from invitations where email = ${json.email}`).toHaveLength(0);
  });
});

describe('access before the body', () => {
  it('answers a stranger 404 and a MEMBER 403 whatever body they send', async () => {
    const seeded = await seedProject(api, owner.accessToken);
    await addMember(api, owner.accessToken, seeded.id, member);
    const invalid = { name: '', role: 'nobody', email: 'nope', targetVibeId: 'x' };
    const insideProject: [string, string][] = [
      ['PUT', `/api/projects/${seeded.id}`],
      ['POST', `/api/projects/${seeded.id}/invite`],
      ['PUT', `/api/projects/${seeded.id}/members/${member.user.id}`],
      ['POST', `/api/projects/${seeded.id}/vibes`],
      ['PUT', `/api/vibes/${seeded.vibeId}`],
      ['POST', `/api/vibes/${seeded.vibeId}/cuts`],
      ['PUT', `/api/cuts/${seeded.cutId}`],
      ['PUT', `/api/cuts/${seeded.cutId}/move`],
    ];
    for (const [method, path] of insideProject) {
      expect((await api.request(method, path, { token: stranger.accessToken, json: invalid })).status, `${method} ${path}`).toBe(404);
    }
    for (const [method, path] of insideProject.slice(0, 3)) {
      expect((await api.request(method, path, { token: member.accessToken, json: invalid })).status, `${method} ${path}`).toBe(403);
    }
  });
});
