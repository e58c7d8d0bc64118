/**
 * A MEMBER cannot destroy another member’s work sideways: a MEMBER refused the delete of an
 * ADMIN's file must not remove it by deleting its cut or its vibe, nor revoke the links the ADMIN sent out.
 */
import { randomUUID } from 'node:crypto';
import { access } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMember, type Api, expectStatus, seedProject, startWithUsersAndSettings, type User } from './authz/fixture.js';
import { sampleBytes, upload } from './support/files.js';
import { call } from './support/http.js';
import type { TestServer } from './support/server.js';

let server: TestServer;
let api: Api;
let admin: User;
let member: User;

beforeAll(async () => {
  // Deletes for good (TRASH_RETENTION_DAYS=0): these tests follow the bytes.
  ({ server, api, users: [admin, member] } = await startWithUsersAndSettings({ TRASH_RETENTION_DAYS: '0' }, 'Admin', 'Member'));
});
afterAll(() => server?.close());

/** A project of `admin` with `member` as its MEMBER: one vibe, one cut. */
async function bandProject() {
  const project = await seedProject(api, admin.accessToken);
  await addMember(api, admin.accessToken, project.id, member);
  return project;
}

const uploadAs = async (user: User, cutId: string) =>
  expectStatus(upload(api, user.accessToken, cutId, 'take.mp3', sampleBytes('mp3', 256)), 201) as Promise<{ id: string }>;

const storedPath = (fileId: string) => path.join(server.dataDir, 'files', `${fileId}.mp3`);
const exists = (file: string) => access(file).then(() => true, () => false);

async function expectForbidden(response: Promise<{ status: number; body: { code: string; detail: string } }>, detail: RegExp) {
  const { status, body } = await response;
  expect(status).toBe(403);
  expect(body.code).toBe('FORBIDDEN');
  expect(body.detail).toMatch(detail);
}

async function expectStillThere(project: { vibeId: string; cutId: string }, fileIds: string[]) {
  expect(await server.sql`select 1 from vibes where id = ${project.vibeId}`).toHaveLength(1);
  expect(await server.sql`select 1 from cuts where id = ${project.cutId}`).toHaveLength(1);
  expect(await server.sql`select id from files where id = any(${fileIds}::uuid[])`).toHaveLength(fileIds.length);
  for (const id of fileIds) expect(await exists(storedPath(id))).toBe(true);
}

describe('a MEMBER refused a file delete cannot remove the file another way', () => {
  it('refuses deleting a cut that holds an ADMIN’s file with 403, deleting nothing', async () => {
    const project = await bandProject();
    const theirs = await uploadAs(admin, project.cutId);
    const mine = await uploadAs(member, project.cutId);
    await expectForbidden(api.request('DELETE', `/api/files/${theirs.id}`, { token: member.accessToken }), /uploader or a project ADMIN/);

    await expectForbidden(api.request('DELETE', `/api/cuts/${project.cutId}`, { token: member.accessToken }), /cut holding files uploaded by someone else/);
    await expectStillThere(project, [theirs.id, mine.id]);
  });

  it('refuses deleting a vibe that holds an ADMIN’s takes with 403, deleting nothing', async () => {
    const project = await bandProject();
    const second = await expectStatus(
      api.request('POST', `/api/vibes/${project.vibeId}/cuts`, { token: member.accessToken, json: { name: 'Member’s cut' } }),
      201,
    );
    const mine = await uploadAs(member, second.id);
    const theirs = await uploadAs(admin, project.cutId);

    await expectForbidden(api.request('DELETE', `/api/vibes/${project.vibeId}`, { token: member.accessToken }), /vibe holding files uploaded by someone else/);
    await expectStillThere(project, [theirs.id, mine.id]);
    expect(await server.sql`select 1 from cuts where id = ${second.id}`).toHaveLength(1);
  });

  it('refuses revoking the links of an ADMIN’s file with 403; the links keep working', async () => {
    const project = await bandProject();
    const theirs = await uploadAs(admin, project.cutId);
    const link = await expectStatus(api.request('POST', `/api/files/${theirs.id}/share`, { token: admin.accessToken }), 201);
    await expectStatus(api.request('POST', `/api/files/${theirs.id}/share`, { token: member.accessToken }), 201);

    await expectForbidden(api.request('DELETE', `/api/files/${theirs.id}/share`, { token: member.accessToken }), /uploader or a project ADMIN/);
    expect((await call(server.url, 'GET', `/api/share/${link.token}`)).status).toBe(200);
    expect(await server.sql`select 1 from share_links where file_id = ${theirs.id}`).toHaveLength(2);
  });
});

describe('what a MEMBER and an ADMIN still may', () => {
  it('lets a MEMBER delete an empty cut and vibe, and ones holding only their own files, bytes and all', async () => {
    const project = await bandProject();
    const empty = await expectStatus(api.request('POST', `/api/vibes/${project.vibeId}/cuts`, { token: admin.accessToken, json: { name: 'Empty' } }), 201);
    await expectStatus(api.request('DELETE', `/api/cuts/${empty.id}`, { token: member.accessToken }), 200);

    const mine = await uploadAs(member, project.cutId);
    await expectStatus(api.request('DELETE', `/api/cuts/${project.cutId}`, { token: member.accessToken }), 200);
    expect(await exists(storedPath(mine.id))).toBe(false);

    const other = await bandProject();
    const alsoMine = await uploadAs(member, other.cutId);
    await expectStatus(api.request('DELETE', `/api/vibes/${other.vibeId}`, { token: member.accessToken }), 200);
    expect(await server.sql`select 1 from files where id = ${alsoMine.id}`).toHaveLength(0);
    expect(await exists(storedPath(alsoMine.id))).toBe(false);

    const emptyVibe = await expectStatus(api.request('POST', `/api/projects/${other.id}/vibes`, { token: admin.accessToken, json: { name: 'Empty' } }), 201);
    await expectStatus(api.request('DELETE', `/api/vibes/${emptyVibe.id}`, { token: member.accessToken }), 200);
  });

  it('lets an ADMIN delete a cut and a vibe holding a MEMBER’s files', async () => {
    const project = await bandProject();
    const theirs = await uploadAs(member, project.cutId);
    await expectStatus(api.request('DELETE', `/api/cuts/${project.cutId}`, { token: admin.accessToken }), 200);
    expect(await exists(storedPath(theirs.id))).toBe(false);

    const other = await bandProject();
    await uploadAs(member, other.cutId);
    await expectStatus(api.request('DELETE', `/api/vibes/${other.vibeId}`, { token: admin.accessToken }), 200);
  });

  it('lets the uploader, and a project ADMIN, revoke every link of a file', async () => {
    const project = await bandProject();
    const mine = await uploadAs(member, project.cutId);
    await expectStatus(api.request('POST', `/api/files/${mine.id}/share`, { token: admin.accessToken }), 201);
    expect(await expectStatus(api.request('DELETE', `/api/files/${mine.id}/share`, { token: member.accessToken }), 200)).toEqual({ revoked: 1 });
    await expectStatus(api.request('POST', `/api/files/${mine.id}/share`, { token: member.accessToken }), 201);
    expect(await expectStatus(api.request('DELETE', `/api/files/${mine.id}/share`, { token: admin.accessToken }), 200)).toEqual({ revoked: 1 });
  });
});

describe('a file uploaded while a MEMBER deletes', () => {
  /**
   * Holds an upload of the ADMIN's file into `cutId` open, as the server's upload does (a key-share lock on
   * the cut, then the row), until the request `send` starts is waiting for a lock; then commits it.
   */
  async function uploadCommittingDuring<T>(cutId: string, send: () => Promise<T>): Promise<{ fileId: string; response: T }> {
    const fileId = randomUUID();
    let response!: Promise<T>;
    await server.sql.begin(async (tx) => {
      await tx`select 1 from cuts where id = ${cutId} for key share`;
      await tx`
        insert into files (id, cut_id, project_id, name, extension, type, size, mime_type, sha256, uploaded_by)
        select ${fileId}, id, project_id, 'late take', 'mp3', 'CUT', 3, 'audio/mpeg', ${'0'.repeat(64)}, ${admin.user.id}
        from cuts where id = ${cutId}`;
      response = send();
      await untilAServerQueryWaitsForALock();
    });
    return { fileId, response: await response };
  }

  async function untilAServerQueryWaitsForALock(): Promise<void> {
    for (;;) {
      const waiting = await server.sql`
        select 1 from pg_stat_activity
        where datname = current_database() and application_name = 'bandcollab' and wait_event_type = 'Lock'`;
      if (waiting.length > 0) return;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  it('sees it before deleting the cut: 403, the late file kept', async () => {
    const project = await bandProject();
    const mine = await uploadAs(member, project.cutId);
    const { fileId, response } = await uploadCommittingDuring(project.cutId, () =>
      api.request('DELETE', `/api/cuts/${project.cutId}`, { token: member.accessToken }),
    );
    expect(response.status).toBe(403);
    expect(await server.sql`select id from files where id = any(${[fileId, mine.id]}::uuid[])`).toHaveLength(2);
  });

  it('sees it before deleting the vibe: 403, the late file kept', async () => {
    const project = await bandProject();
    const { fileId, response } = await uploadCommittingDuring(project.cutId, () =>
      api.request('DELETE', `/api/vibes/${project.vibeId}`, { token: member.accessToken }),
    );
    expect(response.status).toBe(403);
    expect(await server.sql`select 1 from files where id = ${fileId}`).toHaveLength(1);
    expect(await server.sql`select 1 from vibes where id = ${project.vibeId}`).toHaveLength(1);
  });
});
