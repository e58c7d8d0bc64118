import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMember, type Api, expectStatus, seedProject, startWithUsersAndSettings, storeFileDirectly, type User } from './authz/fixture.js';
import { sampleBytes, upload } from './support/files.js';
import type { TestServer } from './support/server.js';

let server: TestServer;
let api: Api;
let owner: User;
let member: User;

// Deletes for good, as before the trash (§21: TRASH_RETENTION_DAYS=0); trash.test.ts covers the trash.
beforeAll(async () => {
  ({ server, api, users: [owner, member] } = await startWithUsersAndSettings({ TRASH_RETENTION_DAYS: '0' }, 'Owner', 'Member'));
});
afterAll(() => server?.close());

/** Every row that still refers to the project, table by table. */
async function rowsOfProject(projectId: string) {
  const [counts] = await server.sql<Record<string, number>[]>`
    select (select count(*)::int from projects where id = ${projectId}) as projects,
           (select count(*)::int from project_members where project_id = ${projectId}) as members,
           (select count(*)::int from invitations where project_id = ${projectId}) as invitations,
           (select count(*)::int from vibes where project_id = ${projectId}) as vibes,
           (select count(*)::int from cuts where project_id = ${projectId}) as cuts,
           (select count(*)::int from files where project_id = ${projectId}) as files,
           (select count(*)::int from share_links s join files f on f.id = s.file_id where f.project_id = ${projectId}) as shares`;
  return counts;
}

describe('delete cascades', () => {
  it('deleting a project leaves no rows and no stored files', async () => {
    const seeded = await seedProject(api, owner.accessToken);
    await addMember(api, owner.accessToken, seeded.id, member);
    await expectStatus(api.request('POST', `/api/projects/${seeded.id}/invite`, { token: owner.accessToken, json: { email: 'soon@example.com', role: 'MEMBER' } }), 201);
    const second = await expectStatus(api.request('POST', `/api/projects/${seeded.id}/vibes`, { token: owner.accessToken, json: { name: 'Second' } }), 201);
    const secondCut = await expectStatus(api.request('POST', `/api/vibes/${second.id}/cuts`, { token: member.accessToken, json: { name: 'Cut' } }), 201);
    const files = [
      await storeFileDirectly(server, seeded.cutId, owner.user.id),
      await storeFileDirectly(server, seeded.cutId, member.user.id),
      await storeFileDirectly(server, secondCut.id, member.user.id),
    ];
    await server.sql`insert into share_links (token_hash, file_id, created_by) values ('h1', ${files[0]!.id}, ${owner.user.id})`;
    const untouched = await seedProject(api, owner.accessToken);
    const kept = await storeFileDirectly(server, untouched.cutId, owner.user.id);

    const response = await api.request('DELETE', `/api/projects/${seeded.id}`, { token: owner.accessToken });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ id: seeded.id, deleted: true });
    expect(await rowsOfProject(seeded.id)).toEqual({ projects: 0, members: 0, invitations: 0, vibes: 0, cuts: 0, files: 0, shares: 0 });
    for (const file of files) expect(existsSync(file.path)).toBe(false);
    expect(existsSync(kept.path)).toBe(true);
    expect((await rowsOfProject(untouched.id))!.files).toBe(1);
    expect((await api.request('GET', `/api/projects/${seeded.id}`, { token: owner.accessToken })).status).toBe(404);
    expect((await api.request('DELETE', `/api/projects/${seeded.id}`, { token: owner.accessToken })).status).toBe(404);
  });

  it('deleting a vibe removes its cuts, their files and their bytes, and nothing else', async () => {
    const seeded = await seedProject(api, owner.accessToken);
    const otherCut = await expectStatus(api.request('POST', `/api/vibes/${seeded.vibeId}/cuts`, { token: owner.accessToken, json: { name: 'Two' } }), 201);
    const gone = [await storeFileDirectly(server, seeded.cutId, owner.user.id), await storeFileDirectly(server, otherCut.id, owner.user.id)];
    const keptVibe = await expectStatus(api.request('POST', `/api/projects/${seeded.id}/vibes`, { token: owner.accessToken, json: { name: 'Kept' } }), 201);
    const keptCut = await expectStatus(api.request('POST', `/api/vibes/${keptVibe.id}/cuts`, { token: owner.accessToken, json: { name: 'Kept' } }), 201);
    const kept = await storeFileDirectly(server, keptCut.id, owner.user.id);

    expect((await api.request('DELETE', `/api/vibes/${seeded.vibeId}`, { token: owner.accessToken })).status).toBe(200);
    expect(await rowsOfProject(seeded.id)).toMatchObject({ projects: 1, vibes: 1, cuts: 1, files: 1 });
    for (const file of gone) expect(existsSync(file.path)).toBe(false);
    expect(existsSync(kept.path)).toBe(true);
  });

  it('deleting a cut removes its files and their bytes', async () => {
    const seeded = await seedProject(api, owner.accessToken);
    const file = await storeFileDirectly(server, seeded.cutId, owner.user.id);
    const response = await api.request('DELETE', `/api/cuts/${seeded.cutId}`, { token: owner.accessToken });
    expect(response.body).toEqual({ id: seeded.cutId, deleted: true });
    expect(await rowsOfProject(seeded.id)).toMatchObject({ vibes: 1, cuts: 0, files: 0 });
    expect(existsSync(file.path)).toBe(false);
  });

  it('a MEMBER cannot delete the project: 403, and everything stays', async () => {
    const seeded = await seedProject(api, owner.accessToken);
    await addMember(api, owner.accessToken, seeded.id, member);
    const file = await storeFileDirectly(server, seeded.cutId, member.user.id);
    expect((await api.request('DELETE', `/api/projects/${seeded.id}`, { token: member.accessToken })).status).toBe(403);
    expect(await rowsOfProject(seeded.id)).toMatchObject({ projects: 1, vibes: 1, cuts: 1, files: 1 });
    expect(existsSync(file.path)).toBe(true);
  });
});

describe('deletes racing uploads', () => {
  /** Stored file names against the rows that name them: after every race, the two must agree. */
  async function expectDiskMatchesRows() {
    const rows = await server.sql<{ name: string }[]>`select id || '.' || extension as name from files`;
    expect((await readdir(join(server.dataDir, 'files'))).sort()).toEqual(rows.map((row) => row.name).sort());
  }

  it.each(['cut', 'vibe', 'project'] as const)('deleting a %s while uploads into it run leaves no file without a row, nor a row without its file', async (level) => {
    const seeded = await seedProject(api, owner.accessToken);
    const uploads = Array.from({ length: 6 }, (_, i) => upload(api, owner.accessToken, seeded.cutId, `take-${i}.wav`, sampleBytes('wav', 256 * 1024)));
    await new Promise((resolve) => setTimeout(resolve, 5));
    const path = { cut: `/api/cuts/${seeded.cutId}`, vibe: `/api/vibes/${seeded.vibeId}`, project: `/api/projects/${seeded.id}` }[level];
    const deleted = await api.request('DELETE', path, { token: owner.accessToken });
    expect(deleted.status).toBe(200);
    for (const result of await Promise.all(uploads)) expect([201, 404]).toContain(result.status);
    expect(await server.sql`select 1 from files where cut_id = ${seeded.cutId}`).toHaveLength(0);
    await expectDiskMatchesRows();
  });
});
