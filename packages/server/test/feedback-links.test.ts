import { randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMember, type Api, expectStatus, seedProject, startWithUsers, storeFileDirectly, type User } from './authz/fixture.js';
import type { TestServer } from './support/server.js';

// §14 share links that follow a series, and feedback links (guest comments).

let server: TestServer;
let api: Api;
let admin: User;
let member: User;

beforeAll(async () => {
  ({ server, api, users: [admin, member] } = await startWithUsers('Ana', 'Bo'));
});
afterAll(() => server?.close());

/** A project with Bo as member and one stored file (version 1 of its series), uploaded by Ana. */
async function band() {
  const seeded = await seedProject(api, admin.accessToken);
  await addMember(api, admin.accessToken, seeded.id, member);
  const file = await storeFileDirectly(server, seeded.cutId, admin.user.id);
  return { ...seeded, fileId: file.id };
}

/** The next version of a file's series, stored as an upload with versionOf would store it. */
async function nextVersion(fileId: string, bytes: Buffer): Promise<string> {
  const id = randomUUID();
  await server.sql`
    with series as (update file_series set last_version = last_version + 1 where id = (select series_id from files where id = ${fileId}) returning id, last_version)
    insert into files (id, cut_id, project_id, name, extension, type, size, mime_type, sha256, uploaded_by, series_id, version)
    select ${id}, f.cut_id, f.project_id, f.name, 'mp3', 'CUT', ${bytes.length}, 'audio/mpeg', ${'1'.repeat(64)}, f.uploaded_by, s.id, s.last_version
    from files f, series s where f.id = ${fileId}`;
  await writeFile(join(server.dataDir, 'files', `${id}.mp3`), bytes);
  return id;
}

const share = async (fileId: string, json: object = {}, token = member.accessToken) =>
  (await expectStatus(api.request('POST', `/api/files/${fileId}/share`, { token, json }), 201)).token as string;
const describeLink = (token: string) => api.request('GET', `/api/share/${token}`, { headers: { accept: 'application/json' } });
const guestPost = (token: string, json: object) => api.request('POST', `/api/share/${token}/comments`, { json });

describe('links that follow the series', () => {
  it('a latest link serves the newest version at each access and says which; a link of this version stays on it', async () => {
    const { fileId } = await band();
    const latest = await share(fileId, { follow: 'latest' });
    const pinned = await share(fileId);
    expect((await describeLink(latest)).body).toMatchObject({ kind: 'file', version: 1, follow: 'latest', allowComments: false });
    const v2 = Buffer.from('ID3 the second mix');
    await nextVersion(fileId, v2);
    expect((await describeLink(latest)).body).toMatchObject({ version: 2, size: v2.length });
    expect((await api.request('GET', `/api/share/${latest}`)).text).toBe(v2.toString());
    expect((await describeLink(pinned)).body).toMatchObject({ version: 1, follow: 'this' });
    const page = await api.request('GET', `/share/${latest}`);
    expect(page.text).toContain('Version 2 (latest)');
  });

  it('a cut link neither follows nor takes comments: 400 naming the field', async () => {
    const { cutId } = await band();
    const response = await api.request('POST', `/api/cuts/${cutId}/share`, { token: member.accessToken, json: { allowComments: true } });
    expect(response.status).toBe(400);
    expect(response.body.errors).toEqual([expect.objectContaining({ field: 'allowComments' })]);
  });
});

describe('feedback links', () => {
  it('a link without allowComments has no comments: 404 to read and to write', async () => {
    const { fileId } = await band();
    const token = await share(fileId);
    expect((await api.request('GET', `/api/share/${token}/comments`)).status).toBe(404);
    expect((await guestPost(token, { name: 'Lee', body: 'Nice' })).status).toBe(404);
  });

  it('a guest comments without an account; the page shape lists members’ and guests’ comments; mentions are refused', async () => {
    const { fileId } = await band();
    const token = await share(fileId, { allowComments: true });
    await expectStatus(api.request('POST', `/api/files/${fileId}/comments`, { token: admin.accessToken, json: { body: 'Bass at the drop?', atMs: 9000 } }), 201);
    const created = await guestPost(token, { name: ' Lee (label) ', body: 'Vocals too quiet', atMs: 2000, endMs: 4000 });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      fileId,
      author: { id: null, name: 'Lee (label)', avatarUrl: null, guest: true },
      body: 'Vocals too quiet',
      atMs: 2000,
      endMs: 4000,
      mentions: [],
      replies: [],
    });
    const reply = await expectStatus(guestPost(token, { name: 'Lee', body: 'Also the hats', parentId: created.body.id }), 201);
    expect(reply.parentId).toBe(created.body.id);
    const page = await expectStatus(api.request('GET', `/api/share/${token}/comments`), 200);
    expect(page.comments.map((comment: { body: string }) => comment.body)).toEqual(['Vocals too quiet', 'Bass at the drop?']);
    expect(page.comments[0].replies.map((r: { body: string }) => r.body)).toEqual(['Also the hats']);
    expect(page.counts).toEqual({ open: 2, resolved: 0 });
    expect(page.nextCursor).toBeNull();
    const mention = await guestPost(token, { name: 'Lee', body: 'Hey', mentions: [admin.user.id] });
    expect(mention.status).toBe(400);
    expect(mention.body.errors).toEqual([expect.objectContaining({ field: 'mentions' })]);
  });

  it('a latest link shows the series’ comments and comments on the newest version', async () => {
    const { fileId } = await band();
    const token = await share(fileId, { follow: 'latest', allowComments: true });
    await expectStatus(guestPost(token, { name: 'Lee', body: 'On v1', atMs: 1000 }), 201);
    const v2 = await nextVersion(fileId, Buffer.from('ID3 v2'));
    const onV2 = await expectStatus(guestPost(token, { name: 'Lee', body: 'On v2', atMs: 1000 }), 201);
    expect(onV2).toMatchObject({ fileId: v2, version: 2 });
    const page = await expectStatus(api.request('GET', `/api/share/${token}/comments`), 200);
    expect(page.comments.map((comment: { body: string; version: number }) => [comment.body, comment.version])).toEqual([['On v1', 1], ['On v2', 2]]);
  });

  it('the link’s creator deletes a guest comment, another member may not; revoking the link keeps its comments', async () => {
    const { fileId } = await band();
    const token = await share(fileId, { allowComments: true }, member.accessToken);
    const first = await expectStatus(guestPost(token, { name: 'Lee', body: 'One' }), 201);
    const second = await expectStatus(guestPost(token, { name: 'Lee', body: 'Two' }), 201);
    await expectStatus(api.request('DELETE', `/api/comments/${first.id}`, { token: member.accessToken }), 200);
    await expectStatus(api.request('DELETE', `/api/files/${fileId}/share`, { token: admin.accessToken }), 200);
    expect((await api.request('GET', `/api/share/${token}/comments`)).status).toBe(404);
    const kept = await expectStatus(api.request('GET', `/api/files/${fileId}/comments`, { token: member.accessToken }), 200);
    expect(kept.comments.map((comment: { id: string }) => comment.id)).toEqual([second.id]);
    expect(kept.comments[0].author).toEqual({ id: null, name: 'Lee', avatarUrl: null, guest: true });
  });

  it('takes at most 20 comments per link and client address within 10 minutes: the 21st is 429 with Retry-After; refused ones are not counted', async () => {
    const { fileId } = await band();
    const token = await share(fileId, { allowComments: true });
    expect((await guestPost(token, { name: '', body: 'refused' })).status).toBe(400);
    for (let i = 1; i <= 20; i += 1) await expectStatus(guestPost(token, { name: 'Lee', body: `Note ${i}` }), 201);
    const limited = await guestPost(token, { name: 'Lee', body: 'Note 21' });
    expect(limited.status).toBe(429);
    expect(limited.body.code).toBe('RATE_LIMITED');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(590);
    // Another link of the same file has its own allowance.
    await expectStatus(guestPost(await share(fileId, { allowComments: true }), { name: 'Lee', body: 'Elsewhere' }), 201);
    const page = await expectStatus(api.request('GET', `/api/share/${token}/comments`), 200);
    expect(page.counts.open).toBe(21);
  });

  it('takes at most 200 guest comments per link from all addresses together, then 403 naming the limit', async () => {
    const { fileId } = await band();
    const token = await share(fileId, { allowComments: true });
    const [link] = await server.sql`select id from share_links where allow_comments order by created_at desc limit 1`;
    // 199 guests' comments as many addresses would have left them; the 200th through the API, the 201st refused.
    await server.sql`
      insert into comments (id, file_id, guest_name, share_link_id, body)
      select gen_random_uuid(), ${fileId}, 'Guest ' || n, ${link!.id}, 'note ' || n from generate_series(1, 199) as n`;
    await expectStatus(guestPost(token, { name: 'Lee', body: 'The 200th' }), 201);
    const full = await guestPost(token, { name: 'Lee', body: 'The 201st' });
    expect(full.status).toBe(403);
    expect(full.body).toMatchObject({ code: 'FORBIDDEN', detail: expect.stringContaining('200 guest comments') });
    // Members still comment on the file.
    await expectStatus(api.request('POST', `/api/files/${fileId}/comments`, { token: member.accessToken, json: { body: 'Members go on' } }), 201);
  });

  it('takes at most 100 replies under one comment, members\' and guests\' together: the 101st is 400 naming parentId', async () => {
    const { fileId } = await band();
    const token = await share(fileId, { allowComments: true });
    const parent = await expectStatus(api.request('POST', `/api/files/${fileId}/comments`, { token: member.accessToken, json: { body: 'Thread' } }), 201);
    await server.sql`
      insert into comments (id, file_id, parent_id, author_id, body)
      select gen_random_uuid(), ${fileId}, ${parent.id}, ${member.user.id}, 'reply ' || n from generate_series(1, 99) as n`;
    await expectStatus(guestPost(token, { name: 'Lee', body: 'The 100th', parentId: parent.id }), 201);
    for (const refused of [
      await guestPost(token, { name: 'Lee', body: 'The 101st', parentId: parent.id }),
      await api.request('POST', `/api/files/${fileId}/comments`, { token: member.accessToken, json: { body: 'Me too', parentId: parent.id } }),
    ]) {
      expect(refused.status).toBe(400);
      expect(refused.body.errors).toEqual([{ field: 'parentId', message: expect.stringContaining('at most 100 replies') }]);
    }
  });

  it('its creator or a project ADMIN closes a link to new comments without revoking it, and reopens it; another member may not', async () => {
    const { fileId } = await band();
    const token = await share(fileId, { allowComments: true }, member.accessToken);
    await expectStatus(guestPost(token, { name: 'Lee', body: 'Before' }), 201);
    const [{ id: linkId }] = await expectStatus(api.request('GET', `/api/files/${fileId}/shares`, { token: member.accessToken }), 200);
    const stranger = await api.register({ name: 'Cy' });
    expect((await api.request('PUT', `/api/shares/${linkId}/comments-closed`, { token: stranger.accessToken })).status).toBe(404);
    const closed = await expectStatus(api.request('PUT', `/api/shares/${linkId}/comments-closed`, { token: member.accessToken }), 200);
    expect(closed).toEqual({ id: linkId, commentsClosed: true });
    const refused = await guestPost(token, { name: 'Lee', body: 'After' });
    expect(refused.status).toBe(403);
    expect(refused.body.detail).toContain('closed to new comments');
    // Still serving the file and its comments; the page shows them without the form.
    expect((await describeLink(token)).status).toBe(200);
    expect((await expectStatus(api.request('GET', `/api/share/${token}/comments`), 200)).counts.open).toBe(1);
    const page = await api.request('GET', `/share/${token}`);
    expect(page.text).toContain('closed to new comments');
    expect(page.text).not.toContain('<form');
    const reopened = await expectStatus(api.request('DELETE', `/api/shares/${linkId}/comments-closed`, { token: admin.accessToken }), 200);
    expect(reopened).toEqual({ id: linkId, commentsClosed: false });
    await expectStatus(guestPost(token, { name: 'Lee', body: 'Again' }), 201);
    // A link made without allowComments has nothing to close.
    await share(fileId);
    const plain = (await expectStatus(api.request('GET', `/api/files/${fileId}/shares`, { token: member.accessToken }), 200)).at(-1).id;
    expect((await api.request('PUT', `/api/shares/${plain}/comments-closed`, { token: member.accessToken })).status).toBe(404);
  });
});
