import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMember, type Api, expectStatus, PNG_BYTES, seedProject, type User } from './authz/fixture.js';
import { analysed, previewed, sampleBytes, toneWav, upload, uploadForm } from './support/files.js';
import { call, client } from './support/http.js';
import { startLoggedServer } from './support/logged-server.js';
import { startTestServer, TestClock, type TestServer } from './support/server.js';

// §21 Trash: deletes move things to the trash, invisible everywhere, restorable with no byte copied,
// purged at trashedUntil by a job.

let server: TestServer;
let api: Api;
let owner: User;
let member: User;

beforeAll(async () => {
  server = await startTestServer({ METRICS_LOOPBACK: 'true', USER_QUOTA_MB: '50' });
  api = client(server.url);
  owner = await api.register({ name: 'Owner' });
  member = await api.register({ name: 'Member' });
});
afterAll(() => server?.close());

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/** Every record of the project, table by table, field by field (the trash stamps aside). */
async function recordsOf(projectId: string) {
  const strip = (rows: Record<string, unknown>[]) => rows.map(({ trash_id: _stamp, ...row }) => row);
  const ofFiles = server.sql`select id from public.files where project_id = ${projectId}`;
  return {
    projects: strip(await server.sql`select * from public.projects where id = ${projectId}`),
    members: strip(await server.sql`select * from public.project_members where project_id = ${projectId} order by user_id`),
    vibes: strip(await server.sql`select * from public.vibes where project_id = ${projectId} order by id`),
    cuts: strip(await server.sql`select * from public.cuts where project_id = ${projectId} order by id`),
    series: strip(await server.sql`select * from public.file_series where cut_id in (select id from public.cuts where project_id = ${projectId}) order by id`),
    files: strip(await server.sql`select * from public.files where project_id = ${projectId} order by id`),
    comments: strip(await server.sql`select * from public.comments where file_id in (${ofFiles}) order by id`),
    reviews: strip(await server.sql`select * from public.reviews where file_id in (${ofFiles}) order by file_id, user_id`),
    stems: strip(await server.sql`select * from public.stem_entries where file_id in (${ofFiles}) order by file_id, position`),
    shares: strip(await server.sql`select * from public.share_links where file_id in (${ofFiles}) order by id`),
  };
}

/** The sha256 of every stored object of the project's files. */
async function bytesOf(projectId: string) {
  const files = await server.sql<{ id: string; extension: string }[]>`select id, extension from public.files where project_id = ${projectId} order by id`;
  return Promise.all(files.map(async (file) => [file.id, sha256(await server.stored.read(`files/${file.id}.${file.extension}`))]));
}

/** How many store operations this server has made, by operation. */
async function storeOperations(): Promise<Record<string, number>> {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  const counts: Record<string, number> = {};
  for (const match of text.matchAll(/^bandcollab_store_operation_duration_seconds_count\{operation="([^"]+)"\} (\d+)/gm)) counts[match[1]!] = Number(match[2]);
  return counts;
}

/** A project with two vibes, a cut holding a two-version series with a comment thread, a review and a STEM ZIP. */
async function richProject() {
  const seeded = await seedProject(api, owner.accessToken, `Band ${Math.random()}`);
  await addMember(api, owner.accessToken, seeded.id, member);
  await expectStatus(api.request('POST', `/api/projects/${seeded.id}/vibes`, { token: owner.accessToken, json: { name: 'Second' } }), 201);
  const v1 = await expectStatus(upload(api, owner.accessToken, seeded.cutId, 'mix.wav', toneWav(1)), 201);
  const v2 = await expectStatus(
    uploadForm(api, owner.accessToken, [{ name: 'versionOf', value: v1.id }, { name: 'file', value: toneWav(2), fileName: 'mix.wav' }]),
    201,
  );
  const other = await expectStatus(upload(api, member.accessToken, seeded.cutId, 'take.mp3', sampleBytes('mp3', 4096)), 201);
  const comment = await expectStatus(api.request('POST', `/api/files/${v2.id}/comments`, { token: member.accessToken, json: { body: 'Louder here', atMs: 500 } }), 201);
  await expectStatus(api.request('POST', `/api/files/${v2.id}/comments`, { token: owner.accessToken, json: { body: 'Done', parentId: comment.id } }), 201);
  await expectStatus(api.request('PUT', `/api/files/${v2.id}/review`, { token: member.accessToken, json: { state: 'approved', note: 'Great' } }), 200);
  // Analysis and previews done, so nothing changes the records or writes to the store but the trash.
  for (const file of [v1, v2, other]) {
    await analysed(api, owner.accessToken, file.id);
    await previewed(api, owner.accessToken, file.id);
  }
  const [series] = await server.sql<{ series_id: string }[]>`select series_id from public.files where id = ${v1.id}`;
  return { ...seeded, v1, v2, other, comment, seriesId: series!.series_id };
}

const restore = (kind: string, id: string, token = owner.accessToken) => api.request('POST', `/api/trash/${kind}/${id}/restore`, { token });

describe('delete and restore', () => {
  for (const kind of ['project', 'vibe', 'cut', 'series'] as const) {
    it(`a ${kind} comes back field by field and byte by byte, no byte copied`, async () => {
      const project = await richProject();
      const records = await recordsOf(project.id);
      const bytes = await bytesOf(project.id);
      const detail = (await api.request('GET', `/api/projects/${project.id}`, { token: owner.accessToken })).body;
      const operations = await storeOperations();

      const target = { project: project.id, vibe: project.vibeId, cut: project.cutId, series: project.seriesId }[kind];
      const path = { project: `/api/projects/${target}`, vibe: `/api/vibes/${target}`, cut: `/api/cuts/${target}`, series: `/api/files/${project.v1.id}?series=all` }[kind];
      const deleted = await expectStatus(api.request('DELETE', path, { token: owner.accessToken }), 200);
      expect(Date.parse(deleted.trashedUntil) - Date.now()).toBeGreaterThan(29 * 86_400_000);

      // Invisible: the detail, the file, its comments.
      expect((await api.request('GET', `/api/files/${project.v2.id}`, { token: owner.accessToken })).status).toBe(404);
      expect((await api.request('GET', `/api/files/${project.v2.id}/comments`, { token: owner.accessToken })).status).toBe(404);
      if (kind === 'project') {
        expect((await api.request('GET', `/api/projects/${project.id}`, { token: owner.accessToken })).status).toBe(404);
        expect((await api.request('GET', '/api/projects', { token: owner.accessToken })).body.map((p: { id: string }) => p.id)).not.toContain(project.id);
        const mine = (await api.request('GET', '/api/trash', { token: owner.accessToken })).body;
        expect(mine.find((item: { id: string }) => item.id === project.id)).toMatchObject({ kind: 'project', deletedBy: { id: owner.user.id } });
      } else {
        const listed = (await api.request('GET', `/api/projects/${project.id}/trash`, { token: member.accessToken })).body;
        expect(listed).toEqual([
          { id: target, kind, name: expect.any(String), projectId: project.id, deletedBy: { id: owner.user.id, name: 'Owner' }, trashedAt: expect.any(String), trashedUntil: deleted.trashedUntil },
        ]);
      }
      // The bytes stay under their keys, and still count.
      expect(await bytesOf(project.id)).toEqual(bytes);

      const restored = await expectStatus(restore(kind, target), 200);
      expect(restored).toMatchObject({ id: target, kind, restored: true });
      expect(await recordsOf(project.id)).toEqual(records);
      expect(await bytesOf(project.id)).toEqual(bytes);
      expect((await api.request('GET', `/api/projects/${project.id}`, { token: owner.accessToken })).body).toEqual(detail);
      const after = await storeOperations();
      expect(operations.write).toBeGreaterThan(0);
      for (const operation of ['write', 'delete', 'move', 'startMultipart', 'writePart', 'completeMultipart']) expect(after[operation] ?? 0).toBe(operations[operation] ?? 0);
      expect((await api.request('GET', `/api/projects/${project.id}/trash`, { token: owner.accessToken })).body).toEqual([]);
    });
  }

  it('a name taken meanwhile gets " (restored)"; a parent in the trash comes back with its child', async () => {
    const project = await seedProject(api, owner.accessToken);
    await expectStatus(api.request('DELETE', `/api/cuts/${project.cutId}`, { token: owner.accessToken }), 200);
    await expectStatus(api.request('POST', `/api/vibes/${project.vibeId}/cuts`, { token: owner.accessToken, json: { name: 'Cut' } }), 201);
    expect(await expectStatus(restore('cut', project.cutId), 200)).toMatchObject({ name: 'Cut (restored)' });

    await expectStatus(api.request('DELETE', `/api/cuts/${project.cutId}`, { token: owner.accessToken }), 200);
    await expectStatus(api.request('DELETE', `/api/vibes/${project.vibeId}`, { token: owner.accessToken }), 200);
    await expectStatus(restore('cut', project.cutId), 200);
    expect((await api.request('GET', `/api/vibes/${project.vibeId}`, { token: owner.accessToken })).status).toBe(200);
    expect((await api.request('GET', `/api/cuts/${project.cutId}`, { token: owner.accessToken })).status).toBe(200);
  });

  it('the deleter or an ADMIN restores; another member may not; non-members see nothing', async () => {
    const project = await richProject();
    await expectStatus(api.request('DELETE', `/api/files/${project.v1.id}`, { token: owner.accessToken }), 200);
    expect((await restore('file', project.v1.id, member.accessToken)).status).toBe(403);
    const stranger = await api.register({ name: 'Stranger' });
    expect((await restore('file', project.v1.id, stranger.accessToken)).status).toBe(404);
    expect((await api.request('GET', `/api/projects/${project.id}/trash`, { token: stranger.accessToken })).status).toBe(404);
    await expectStatus(api.request('DELETE', `/api/files/${project.other.id}`, { token: member.accessToken }), 200);
    await expectStatus(restore('file', project.other.id, member.accessToken), 200);
    await expectStatus(restore('file', project.v1.id), 200);
  });

  it('quotas count trashed bytes until purged', async () => {
    const project = await seedProject(api, owner.accessToken);
    const before = (await api.request('GET', '/api/files/storage', { token: owner.accessToken })).body.quota.usedBytes;
    const file = await expectStatus(upload(api, owner.accessToken, project.cutId, 'take.mp3', sampleBytes('mp3', 10_000)), 201);
    await expectStatus(api.request('DELETE', `/api/files/${file.id}`, { token: owner.accessToken }), 200);
    expect((await api.request('GET', '/api/files/storage', { token: owner.accessToken })).body.quota.usedBytes).toBe(before + file.size);
  });

  it('a share link of a trashed file is 410 GONE, and works again once restored', async () => {
    const project = await seedProject(api, owner.accessToken);
    const file = await expectStatus(upload(api, owner.accessToken, project.cutId, 'take.mp3', sampleBytes('mp3', 2048)), 201);
    const { token } = await expectStatus(api.request('POST', `/api/files/${file.id}/share`, { token: owner.accessToken }), 201);
    expect((await call(server.url, 'GET', `/api/share/${token}`)).status).toBe(200);
    await expectStatus(api.request('DELETE', `/api/files/${file.id}`, { token: owner.accessToken }), 200);
    const gone = await call(server.url, 'GET', `/api/share/${token}`);
    expect(gone.status).toBe(410);
    expect(gone.body.code).toBe('GONE');
    await expectStatus(restore('file', file.id), 200);
    expect((await call(server.url, 'GET', `/api/share/${token}`)).status).toBe(200);
  });

  it('a purge on demand deletes the rows, then the bytes', async () => {
    const project = await seedProject(api, owner.accessToken);
    const file = await expectStatus(upload(api, owner.accessToken, project.cutId, 'take.mp3', sampleBytes('mp3', 2048)), 201);
    await expectStatus(api.request('DELETE', `/api/cuts/${project.cutId}`, { token: owner.accessToken }), 200);
    expect((await api.request('DELETE', `/api/trash/cut/${project.cutId}`, { token: member.accessToken })).status).toBe(404);
    expect(await expectStatus(api.request('DELETE', `/api/trash/cut/${project.cutId}`, { token: owner.accessToken }), 202)).toEqual({ purging: 1 });
    await expect.poll(async () => (await server.sql`select 1 from public.files where id = ${file.id}`).length, { timeout: 10_000 }).toBe(0);
    await expect.poll(() => server.stored.exists(`files/${file.id}.mp3`), { timeout: 10_000 }).toBe(false);
    expect(await server.sql`select 1 from public.cuts where id = ${project.cutId}`).toHaveLength(0);
    expect((await restore('cut', project.cutId)).status).toBe(404);
  });
});

describe('covers and vibe images', () => {
  const GIF = Buffer.concat([Buffer.from('GIF89a', 'latin1'), Buffer.alloc(100, 1)]);
  const withImage = (bytes: Buffer, name: string) => {
    const body = new FormData();
    body.append('image', new Blob([new Uint8Array(bytes)]), name);
    return body;
  };
  const keyOf = (url: string) => `images/${url.split('/').pop()!}`;
  const usedBytes = async () => (await api.request('GET', '/api/files/storage', { token: owner.accessToken })).body.quota.usedBytes as number;

  it('a cleared or replaced cover goes to the trash with its bytes and quota, and comes back; the one it displaces goes in its place', async () => {
    const project = await seedProject(api, owner.accessToken, 'Covered');
    await addMember(api, owner.accessToken, project.id, member, 'MEMBER');
    const first = await expectStatus(api.request('PUT', `/api/projects/${project.id}`, { token: owner.accessToken, body: withImage(PNG_BYTES, 'a.png') }), 200);
    const quota = await usedBytes();
    const cleared = await expectStatus(api.request('PUT', `/api/projects/${project.id}`, { token: owner.accessToken, json: { image: null } }), 200);
    expect(cleared.imageUrl).toBeNull();
    // In the trash: listed to members, its bytes kept and counted, served to nobody.
    const [entry, ...others] = await expectStatus(api.request('GET', `/api/projects/${project.id}/trash`, { token: member.accessToken }), 200);
    expect(others).toEqual([]);
    expect(entry).toMatchObject({ kind: 'cover', name: 'cover of Covered', projectId: project.id, deletedBy: { id: owner.user.id } });
    expect(await server.stored.exists(keyOf(first.imageUrl))).toBe(true);
    expect(await usedBytes()).toBe(quota);
    expect((await api.request('GET', first.imageUrl, { token: owner.accessToken })).status).toBe(404);
    // A member who did not delete it may not restore it.
    expect((await restore('cover', entry.id, member.accessToken)).status).toBe(403);

    // A new cover meanwhile: restoring the old one puts the new one in the trash, and nothing is lost.
    const second = await expectStatus(api.request('PUT', `/api/projects/${project.id}`, { token: owner.accessToken, body: withImage(GIF, 'b.gif') }), 200);
    expect(await expectStatus(restore('cover', entry.id), 200)).toMatchObject({ id: entry.id, kind: 'cover', restored: true });
    const detail = await expectStatus(api.request('GET', `/api/projects/${project.id}`, { token: owner.accessToken }), 200);
    expect(detail.imageUrl).toBe(first.imageUrl);
    const image = await fetch(`${server.url}${first.imageUrl}`, { headers: { authorization: `Bearer ${member.accessToken}` } });
    expect(image.status).toBe(200);
    expect(Buffer.from(await image.arrayBuffer())).toEqual(PNG_BYTES);
    const [displaced] = await expectStatus(api.request('GET', `/api/projects/${project.id}/trash`, { token: owner.accessToken }), 200);
    expect(displaced).toMatchObject({ kind: 'cover', name: 'cover of Covered' });
    expect(displaced.id).not.toBe(entry.id);
    expect(await server.stored.exists(keyOf(second.imageUrl))).toBe(true);

    // Purged: the row, then the bytes and the quota.
    const held = await usedBytes();
    await expectStatus(api.request('DELETE', `/api/trash/cover/${displaced.id}`, { token: owner.accessToken }), 202);
    await expect.poll(() => server.stored.exists(keyOf(second.imageUrl)), { timeout: 10_000 }).toBe(false);
    expect(await usedBytes()).toBe(held - GIF.length);
    expect(await server.stored.exists(keyOf(first.imageUrl))).toBe(true);
  });

  it('a vibe image comes back from the trash; a vibe purged for good takes its trashed image with it', async () => {
    const project = await seedProject(api, owner.accessToken);
    const vibe = await expectStatus(api.request('PUT', `/api/vibes/${project.vibeId}`, { token: owner.accessToken, body: withImage(PNG_BYTES, 'v.png') }), 200);
    await expectStatus(api.request('PUT', `/api/vibes/${project.vibeId}`, { token: owner.accessToken, json: { image: null } }), 200);
    const [entry] = await expectStatus(api.request('GET', `/api/projects/${project.id}/trash`, { token: owner.accessToken }), 200);
    expect(entry).toMatchObject({ kind: 'vibe_image', name: `image of vibe ${vibe.name}` });
    await expectStatus(restore('vibe_image', entry.id), 200);
    expect((await expectStatus(api.request('GET', `/api/vibes/${project.vibeId}`, { token: owner.accessToken }), 200)).imageUrl).toBe(vibe.imageUrl);

    await expectStatus(api.request('PUT', `/api/vibes/${project.vibeId}`, { token: owner.accessToken, json: { image: null } }), 200);
    await expectStatus(api.request('DELETE', `/api/vibes/${project.vibeId}`, { token: owner.accessToken }), 200);
    await expectStatus(api.request('DELETE', `/api/trash/vibe/${project.vibeId}`, { token: owner.accessToken }), 202);
    await expect.poll(() => server.stored.exists(keyOf(vibe.imageUrl)), { timeout: 10_000 }).toBe(false);
    expect(await server.sql`select 1 from public.trash where project_id = ${project.id}`).toEqual([]);
    expect(await server.sql`select 1 from stored_images where name = ${vibe.imageUrl.split('/').pop()!}`).toEqual([]);
  });
});

describe('purge at trashedUntil', () => {
  it('with two instances on one database, the rows and the bytes go once, when their time is up', async () => {
    const clock = new TestClock();
    const first = await startTestServer({ PURGE_INTERVAL_SECONDS: '1', TRASH_RETENTION_DAYS: '2' }, clock);
    const second = await startTestServer({ ...first.env, PORT: '0' }, clock);
    try {
      const firstApi = client(first.url);
      const user = await firstApi.register({ name: 'Purged' });
      const project = await seedProject(firstApi, user.accessToken);
      const file = await expectStatus(upload(firstApi, user.accessToken, project.cutId, 'take.mp3', sampleBytes('mp3', 2048)), 201);
      await expectStatus(firstApi.request('DELETE', `/api/vibes/${project.vibeId}`, { token: user.accessToken }), 200);
      await new Promise((resolve) => setTimeout(resolve, 2500));
      expect(await first.sql`select 1 from public.files where id = ${file.id}`).toHaveLength(1);
      expect(await first.stored.exists(`files/${file.id}.mp3`)).toBe(true);

      clock.advance(2 * 86_400 + 60);
      await expect.poll(async () => (await first.sql`select 1 from public.trash where project_id = ${project.id}`).length, { timeout: 20_000 }).toBe(0);
      expect(await first.sql`select 1 from public.files where id = ${file.id}`).toHaveLength(0);
      expect(await first.sql`select 1 from public.vibes where id = ${project.vibeId}`).toHaveLength(0);
      await expect.poll(() => first.stored.exists(`files/${file.id}.mp3`), { timeout: 10_000 }).toBe(false);
      const failed = await first.sql`select 1 from jobs where kind = 'trash_purge' and state = 'failed'`;
      expect(failed).toHaveLength(0);
      // The project lives on (the clock moved past the access token's life: the database tells).
      expect(await first.sql`select 1 from public.projects where id = ${project.id} and trash_id is null`).toHaveLength(1);
    } finally {
      await second.close();
      await first.close();
    }
  });
});

describe('a purge while the file is analysed', () => {
  it('logs no error: the analysis finds its file purged and says so at info', async () => {
    const logged = await startLoggedServer({ SCRYPT_LOG_N: '4' });
    try {
      const loggedApi = client(logged.url);
      const uploader = await loggedApi.register();
      // Purged at ever later moments of the file's analysis: some purge lands while its bytes are read.
      for (let round = 0; round < 25; round += 1) {
        const project = await seedProject(loggedApi, uploader.accessToken, `Take ${round}`);
        await expectStatus(upload(loggedApi, uploader.accessToken, project.cutId, 'take.wav', toneWav(2)), 201);
        await new Promise((resolve) => setTimeout(resolve, round * 10));
        await expectStatus(loggedApi.request('DELETE', `/api/cuts/${project.cutId}`, { token: uploader.accessToken }), 200);
        await expectStatus(loggedApi.request('DELETE', `/api/trash/cut/${project.cutId}`, { token: uploader.accessToken }), 202);
      }
      await expect.poll(async () => (await loggedApi.request('GET', '/api/health')).status).toBe(200);
      expect(logged.output().split('\n').filter((line) => /"level":"(error|fatal)"/.test(line))).toEqual([]);
    } finally {
      await logged.stop();
    }
  });
});
