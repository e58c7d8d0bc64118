import { createHash, randomUUID } from 'node:crypto';
import tonejs from '@tonejs/midi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMember, type Api, expectStatus, ISO_TIMESTAMP, seedProject, startWithUsers, startWithUsersAndSettings, storeFileDirectly, type User } from './authz/fixture.js';
import { toneWav, upload } from './support/files.js';
import type { TestServer } from './support/server.js';
import { readZip } from './support/zip.js';

let server: TestServer;
let api: Api;
let admin: User;
let member: User;
let other: User;
let stranger: User;

beforeAll(async () => {
  ({ server, api, users: [admin, member, other, stranger] } = await startWithUsers('Ana', 'Bo', 'Cy', 'Stranger'));
});
afterAll(() => server?.close());

/** A project with Bo and Cy as members and one stored file, as Ana (its ADMIN) made it. */
async function band() {
  const seeded = await seedProject(api, admin.accessToken);
  await addMember(api, admin.accessToken, seeded.id, member);
  await addMember(api, admin.accessToken, seeded.id, other);
  const file = await storeFileDirectly(server, seeded.cutId, admin.user.id);
  return { ...seeded, fileId: file.id };
}

const post = (fileId: string, json: object, token = member.accessToken) => api.request('POST', `/api/files/${fileId}/comments`, { token, json });
const comment = async (fileId: string, json: object, token = member.accessToken) => expectStatus(post(fileId, json, token), 201);

describe('comments', () => {
  it('creates a comment pinned to a moment: 201, Location, the Comment record', async () => {
    const { fileId, cutId, id: projectId } = await band();
    const response = await post(fileId, { body: ' Kick too loud here ', atMs: 83_000, mentions: [admin.user.id] });
    expect(response.status).toBe(201);
    expect(response.headers.get('location')).toBe(`/api/comments/${response.body.id}`);
    expect(response.body).toEqual({
      id: expect.any(String),
      fileId,
      seriesId: fileId,
      version: 1,
      cutId,
      projectId,
      parentId: null,
      author: { id: member.user.id, name: 'Bo', avatarUrl: null, guest: false },
      body: 'Kick too loud here',
      atMs: 83_000,
      endMs: null,
      mentions: [{ id: admin.user.id, name: 'Ana' }],
      resolved: null,
      createdAt: expect.stringMatching(ISO_TIMESTAMP),
      updatedAt: expect.stringMatching(ISO_TIMESTAMP),
      edited: false,
      deleted: false,
      replies: [],
    });
    expect(await expectStatus(api.request('GET', `/api/comments/${response.body.id}`, { token: other.accessToken }), 200)).toEqual(response.body);
  });

  it.each([
    ['a missing body', {}, 'body'],
    ['an empty body', { body: '  ' }, 'body'],
    ['a body of 5001 characters', { body: 'x'.repeat(5001) }, 'body'],
    ['an escape in the body', { body: 'red \u001b[31m' }, 'body'],
    ['a negative time', { body: 'b', atMs: -1 }, 'atMs'],
    ['a fractional time', { body: 'b', atMs: 1.5 }, 'atMs'],
    ['an end before the start', { body: 'b', atMs: 10, endMs: 10 }, 'endMs'],
    ['an end without a start', { body: 'b', endMs: 10 }, 'endMs'],
    ['a non-member mention', { body: 'b', mentions: ['STRANGER'] }, 'mentions'],
    ['an unknown parent', { body: 'b', parentId: randomUUID() }, 'parentId'],
  ])('refuses %s with 400 VALIDATION_FAILED on its field', async (_label, json, field) => {
    const { fileId } = await band();
    const body = JSON.parse(JSON.stringify(json).replace('STRANGER', stranger.user.id));
    const response = await post(fileId, body);
    expect(response.status).toBe(400);
    expect(response.body.errors.map((e: { field: string }) => e.field)).toEqual([field]);
  });

  it('keeps newlines and tabs in a body', async () => {
    const { fileId } = await band();
    expect((await comment(fileId, { body: 'verse:\n\t-2 dB' })).body).toBe('verse:\n\t-2 dB');
  });

  it('holds replies one level deep, under their parent, without a time of their own', async () => {
    const { fileId } = await band();
    const top = await comment(fileId, { body: 'Snare?', atMs: 1000 });
    const reply = await comment(fileId, { body: 'Yes', parentId: top.id }, admin.accessToken);
    expect(reply).toMatchObject({ parentId: top.id, atMs: null, replies: null });
    for (const json of [
      { body: 'deeper', parentId: reply.id },
      { body: 'timed', parentId: top.id, atMs: 5 },
    ]) {
      expect((await post(fileId, json)).status).toBe(400);
    }
    const read = await expectStatus(api.request('GET', `/api/comments/${top.id}`, { token: member.accessToken }), 200);
    expect(read.replies.map((r: { id: string }) => r.id)).toEqual([reply.id]);
  });

  it('lets only the author edit, sets edited, and refuses a time past the analysed duration', async () => {
    const { fileId } = await band();
    const mine = await comment(fileId, { body: 'first', atMs: 10 });
    expect((await api.request('PUT', `/api/comments/${mine.id}`, { token: admin.accessToken, json: { body: 'theirs' } })).status).toBe(403);
    const edited = await expectStatus(api.request('PUT', `/api/comments/${mine.id}`, { token: member.accessToken, json: { body: 'second', atMs: 20, endMs: 40 } }), 200);
    expect(edited).toMatchObject({ body: 'second', atMs: 20, endMs: 40, edited: true });

    await server.sql`update files set analysis = 'done', audio = ${server.sql.json({ durationMs: 60_000 })} where id = ${fileId}`;
    expect((await post(fileId, { body: 'late click', atMs: 61_000 })).status).toBe(201);
    const past = await post(fileId, { body: 'past the end', atMs: 61_001 });
    expect(past.status).toBe(400);
    expect(past.body.errors[0].field).toBe('atMs');
  });

  it('resolves and reopens top-level comments (any member), not replies', async () => {
    const { fileId } = await band();
    const top = await comment(fileId, { body: 'Bass', atMs: 5 });
    const reply = await comment(fileId, { body: 'ok', parentId: top.id });
    const resolved = await expectStatus(api.request('PUT', `/api/comments/${top.id}/resolved`, { token: other.accessToken }), 200);
    expect(resolved.resolved).toEqual({ at: expect.stringMatching(ISO_TIMESTAMP), by: { id: other.user.id, name: 'Cy' } });
    expect((await api.request('PUT', `/api/comments/${reply.id}/resolved`, { token: other.accessToken })).status).toBe(400);
    const reopened = await expectStatus(api.request('DELETE', `/api/comments/${top.id}/resolved`, { token: member.accessToken }), 200);
    expect(reopened.resolved).toBeNull();
  });

  it('deletes: its author or a project ADMIN; the thread goes to the trash with its replies and comes back whole', async () => {
    const { fileId } = await band();
    const top = await comment(fileId, { body: 'Vocals', atMs: 5 });
    const reply = await comment(fileId, { body: 'agreed', parentId: top.id }, other.accessToken);
    expect((await api.request('DELETE', `/api/comments/${top.id}`, { token: other.accessToken })).status).toBe(403);
    expect(await expectStatus(api.request('DELETE', `/api/comments/${top.id}`, { token: admin.accessToken }), 200)).toEqual({ id: top.id, deleted: true, trashedUntil: expect.stringMatching(ISO_TIMESTAMP) });
    expect((await api.request('GET', `/api/comments/${top.id}`, { token: member.accessToken })).status).toBe(404);
    expect((await api.request('GET', `/api/comments/${reply.id}`, { token: member.accessToken })).status).toBe(404);
    await expectStatus(api.request('POST', `/api/trash/comment/${top.id}/restore`, { token: admin.accessToken }), 200);
    expect(await expectStatus(api.request('GET', `/api/comments/${top.id}`, { token: member.accessToken }), 200)).toMatchObject({ body: 'Vocals', replies: [{ id: reply.id, body: 'agreed' }] });
    await expectStatus(api.request('DELETE', `/api/comments/${reply.id}`, { token: other.accessToken }), 200);
    expect((await api.request('GET', `/api/comments/${reply.id}`, { token: member.accessToken })).status).toBe(404);
  });

  it('with TRASH_RETENTION_DAYS=0 deletes for good: a parent with replies stays as a tombstone', async () => {
    const { server: forGood, api: forGoodApi, users: [author] } = await startWithUsersAndSettings({ TRASH_RETENTION_DAYS: '0' }, 'Author');
    try {
      const project = await seedProject(forGoodApi, author.accessToken);
      const file = await storeFileDirectly(forGood, project.cutId, author.user.id);
      const post = (json: object) => expectStatus(forGoodApi.request('POST', `/api/files/${file.id}/comments`, { token: author.accessToken, json }), 201);
      const top = await post({ body: 'Vocals', atMs: 5 });
      const reply = await post({ body: 'agreed', parentId: top.id });
      expect(await expectStatus(forGoodApi.request('DELETE', `/api/comments/${top.id}`, { token: author.accessToken }), 200)).toEqual({ id: top.id, deleted: true });
      const tombstone = await expectStatus(forGoodApi.request('GET', `/api/comments/${top.id}`, { token: author.accessToken }), 200);
      expect(tombstone).toMatchObject({ deleted: true, body: null, replies: [{ id: reply.id, body: 'agreed' }] });
      await expectStatus(forGoodApi.request('DELETE', `/api/comments/${reply.id}`, { token: author.accessToken }), 200);
      expect(await forGood.sql`select 1 from comments where id = ${reply.id}`).toHaveLength(0);
    } finally {
      await forGood.close();
    }
  });

  it('is 404 to non-members everywhere, and for unknown or malformed ids', async () => {
    const { fileId, cutId, id: projectId } = await band();
    const top = await comment(fileId, { body: 'x', atMs: 1 });
    for (const [method, path] of [
      ['GET', `/api/files/${fileId}/comments`],
      ['POST', `/api/files/${fileId}/comments`],
      ['GET', `/api/comments/${top.id}`],
      ['PUT', `/api/comments/${top.id}`],
      ['DELETE', `/api/comments/${top.id}`],
      ['PUT', `/api/comments/${top.id}/resolved`],
      ['GET', `/api/cuts/${cutId}/comments`],
      ['GET', `/api/projects/${projectId}/comments`],
      ['GET', `/api/files/${fileId}/reviews`],
      ['PUT', `/api/files/${fileId}/review`],
    ] as const) {
      const response = await api.request(method, path, { token: stranger.accessToken, json: method === 'GET' ? undefined : { body: 'x', state: 'approved' } });
      expect(response.status, `${method} ${path}`).toBe(404);
    }
    expect((await api.request('GET', `/api/comments/${randomUUID()}`, { token: member.accessToken })).status).toBe(404);
    expect((await api.request('GET', '/api/comments/not-a-uuid', { token: member.accessToken })).status).toBe(404);
  });
});

describe('comment pages', () => {
  /** 2,000 top-level comments stored at once, some at one moment, some whole-mix, in a random creation order. */
  async function crowdedFile() {
    const { fileId } = await band();
    const rows = Array.from({ length: 2000 }, (_, index) => ({
      id: randomUUID() as string,
      file_id: fileId,
      author_id: member.user.id,
      body: `note ${index}`,
      at_ms: index % 10 === 0 ? null : (index * 7919) % 5000,
      created_at: new Date(Date.UTC(2026, 10, 1) + ((index * 104729) % 2000) * 1000),
    }));
    await server.sql`insert into comments ${server.sql(rows)}`;
    return { fileId, ids: rows.map((row) => row.id) };
  }

  const pageOf = async (path: string) => expectStatus(api.request('GET', path, { token: member.accessToken }), 200);

  it('reads every comment of 2,000 exactly once, in order, also while comments are added between pages', async () => {
    const { fileId, ids } = await crowdedFile();
    const seen: { id: string; atMs: number | null; createdAt: string }[] = [];
    let cursor: string | null = null;
    let pages = 0;
    const added: string[] = [];
    do {
      const page: any = await pageOf(`/api/files/${fileId}/comments?limit=137${cursor ? `&cursor=${cursor}` : ''}`);
      seen.push(...page.comments);
      cursor = page.nextCursor;
      pages += 1;
      // A comment added now lands before the cursor (not seen, by design) or after it (seen once).
      if (pages % 3 === 0) added.push((await comment(fileId, { body: 'meanwhile', atMs: (pages * 997) % 5000 })).id);
    } while (cursor !== null);
    expect(pages).toBeGreaterThanOrEqual(15);
    const seenIds = seen.map((c) => c.id);
    expect(new Set(seenIds).size).toBe(seenIds.length);
    expect(ids.every((id) => seenIds.includes(id))).toBe(true);
    expect(seenIds.filter((id) => !ids.includes(id)).every((id) => added.includes(id))).toBe(true);
    const key = (c: { atMs: number | null; createdAt: string }) => [c.atMs === null ? 1 : 0, c.atMs ?? 0, Date.parse(c.createdAt)];
    for (let i = 1; i < seen.length; i += 1) {
      const [a, b] = [key(seen[i - 1]!), key(seen[i]!)];
      expect(a[0]! < b[0]! || (a[0] === b[0] && (a[1]! < b[1]! || (a[1] === b[1] && a[2]! <= b[2]!)))).toBe(true);
    }
  });

  it('counts open and resolved whatever the page, filters by status, and polls with since', async () => {
    const { fileId } = await band();
    const first = await comment(fileId, { body: 'one', atMs: 1 });
    await comment(fileId, { body: 'two', atMs: 2 });
    await api.request('PUT', `/api/comments/${first.id}/resolved`, { token: member.accessToken });
    const page = await pageOf(`/api/files/${fileId}/comments?limit=1`);
    expect(page.counts).toEqual({ open: 1, resolved: 1 });
    expect(page.comments).toHaveLength(1);
    expect((await pageOf(`/api/files/${fileId}/comments?status=resolved`)).comments.map((c: { id: string }) => c.id)).toEqual([first.id]);

    const before = (await pageOf(`/api/files/${fileId}/comments`)).comments.map((c: { updatedAt: string }) => c.updatedAt).sort().at(-1);
    expect((await pageOf(`/api/files/${fileId}/comments?since=${encodeURIComponent(before)}`)).comments).toEqual([]);
    const reply = await comment(fileId, { body: 'late reply', parentId: first.id });
    const polled = await pageOf(`/api/files/${fileId}/comments?since=${encodeURIComponent(before)}`);
    expect(polled.comments.map((c: { id: string }) => c.id)).toEqual([first.id]);
    expect(polled.comments[0].replies.map((r: { id: string }) => r.id)).toEqual([reply.id]);
  });

  it.each([
    ['limit=0', 'limit'],
    ['limit=501', 'limit'],
    ['status=closed', 'status'],
    ['versions=some', 'versions'],
    ['since=yesterday', 'since'],
    ['cursor=bogus', 'cursor'],
  ])('refuses ?%s with 400 naming %s', async (query, field) => {
    const { fileId } = await band();
    const response = await api.request('GET', `/api/files/${fileId}/comments?${query}`, { token: member.accessToken });
    expect(response.status).toBe(400);
    expect(response.body.errors[0].field).toBe(field);
  });

  it('gives the cut and the project an inbox, with ?mentions=me', async () => {
    const { fileId, cutId, id: projectId } = await band();
    const forAna = await comment(fileId, { body: '@Ana check', atMs: 3, mentions: [admin.user.id] });
    await comment(fileId, { body: 'general', atMs: 4 });
    expect((await pageOf(`/api/cuts/${cutId}/comments`)).comments).toHaveLength(2);
    const mine = await expectStatus(api.request('GET', `/api/projects/${projectId}/comments?mentions=me`, { token: admin.accessToken }), 200);
    expect(mine.comments.map((c: { id: string }) => c.id)).toEqual([forAna.id]);
  });
});

describe('reviews', () => {
  it('keeps one review per member and version, summarised with the open comments', async () => {
    const { fileId } = await band();
    await comment(fileId, { body: 'fix the fade', atMs: 9 });
    const first = await expectStatus(api.request('PUT', `/api/files/${fileId}/review`, { token: member.accessToken, json: { state: 'changes_requested', note: 'fade' } }), 200);
    expect(first).toEqual({ userId: member.user.id, name: 'Bo', state: 'changes_requested', note: 'fade', at: expect.stringMatching(ISO_TIMESTAMP), token: null });
    await expectStatus(api.request('PUT', `/api/files/${fileId}/review`, { token: member.accessToken, json: { state: 'approved' } }), 200);
    await expectStatus(api.request('PUT', `/api/files/${fileId}/review`, { token: other.accessToken, json: { state: 'approved' } }), 200);
    const list = await expectStatus(api.request('GET', `/api/files/${fileId}/reviews`, { token: admin.accessToken }), 200);
    expect(list.reviews).toHaveLength(2);
    expect(list.summary).toEqual({ approved: 2, changesRequested: 0, openComments: 1, ready: false });
    expect(await expectStatus(api.request('DELETE', `/api/files/${fileId}/review`, { token: other.accessToken }), 200)).toEqual({
      fileId,
      userId: other.user.id,
      deleted: true,
    });
    expect((await expectStatus(api.request('GET', `/api/files/${fileId}/reviews`, { token: admin.accessToken }), 200)).summary.approved).toBe(1);
    expect((await api.request('PUT', `/api/files/${fileId}/review`, { token: member.accessToken, json: { state: 'maybe' } })).status).toBe(400);
  });

  it("refuses a write token's review (a CI job cannot approve its own gate); a review token's names the token", async () => {
    const { fileId } = await band();
    const tokenOf = async (scope: string) =>
      (await expectStatus(api.request('POST', '/api/tokens', { token: member.accessToken, json: { name: `CI ${scope}`, scope, expiresIn: 3600 } }), 201)).token as string;
    const writer = await tokenOf('write');
    for (const [method, json] of [['PUT', { state: 'approved' }], ['DELETE', undefined]] as const) {
      const refused = await api.request(method, `/api/files/${fileId}/review`, { token: writer, json });
      expect([refused.status, refused.body.code]).toEqual([403, 'INSUFFICIENT_SCOPE']);
    }
    expect((await expectStatus(api.request('GET', `/api/files/${fileId}/reviews`, { token: writer }), 200)).reviews).toEqual([]);

    const reviewer = await tokenOf('review');
    const review = await expectStatus(api.request('PUT', `/api/files/${fileId}/review`, { token: reviewer, json: { state: 'approved' } }), 200);
    expect(review).toMatchObject({ userId: member.user.id, state: 'approved', token: 'CI review' });
    expect((await expectStatus(api.request('GET', `/api/files/${fileId}/reviews`, { token: admin.accessToken }), 200)).reviews[0].token).toBe('CI review');
    // It reads, and reviews, and nothing more.
    const comment = await api.request('POST', `/api/files/${fileId}/comments`, { token: reviewer, json: { body: 'x' } });
    expect([comment.status, comment.body.code]).toEqual([403, 'INSUFFICIENT_SCOPE']);
    // A person reviewing again through a session takes the token's name off.
    const byHand = await expectStatus(api.request('PUT', `/api/files/${fileId}/review`, { token: member.accessToken, json: { state: 'approved' } }), 200);
    expect(byHand.token).toBeNull();
    await expectStatus(api.request('DELETE', `/api/files/${fileId}/review`, { token: reviewer }), 200);
  });
});

describe('marker exports through the API', () => {
  /** A WAV mix with a point comment, a range, a whole-mix note and a reply. */
  async function commentedMix() {
    const seeded = await seedProject(api, admin.accessToken);
    await addMember(api, admin.accessToken, seeded.id, member);
    const wav = toneWav(4);
    const file = await expectStatus(upload(api, admin.accessToken, seeded.cutId, 'Mix v1.wav', wav), 201);
    const point = await comment(file.id, { body: 'Kick\ntoo loud', atMs: 1000 });
    await comment(file.id, { body: 'Guitar "buzz"', atMs: 2000, endMs: 3500 }, admin.accessToken);
    await comment(file.id, { body: 'More air overall' });
    await comment(file.id, { body: 'agreed', parentId: point.id }, admin.accessToken);
    return { fileId: file.id as string, wav };
  }

  const exported = async (fileId: string, query: string) => {
    const response = await fetch(`${server.url}/api/files/${fileId}/comments/export?${query}`, { headers: { authorization: `Bearer ${member.accessToken}` } });
    return { response, bytes: Buffer.from(await response.arrayBuffer()) };
  };
  const dataChunk = (bytes: Buffer): Buffer => {
    for (let at = 12; at + 8 <= bytes.length; ) {
      const size = bytes.readUInt32LE(at + 4);
      if (bytes.toString('latin1', at, at + 4) === 'data') return bytes.subarray(at + 8, at + 8 + size);
      at += 8 + size + (size & 1);
    }
    throw new Error('no data chunk');
  };
  const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

  it('streams the WAV with cue points: exact Content-Length, every audio byte as uploaded', async () => {
    const { fileId, wav } = await commentedMix();
    const { response, bytes } = await exported(fileId, 'format=wav&offsetMs=500');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('audio/wav');
    expect(response.headers.get('content-disposition')).toContain('attachment; filename="Mix v1.wav"');
    expect(Number(response.headers.get('content-length'))).toBe(bytes.length);
    expect(sha256(dataChunk(bytes))).toBe(sha256(dataChunk(wav)));
    const cue = bytes.subarray(bytes.indexOf('cue '));
    expect(cue.readUInt32LE(8)).toBe(2);
    // 8 kHz: 1,500 ms is frame 12,000 and 2,500 ms frame 20,000 (dwSampleOffset of each cue point).
    expect([cue.readUInt32LE(12 + 20), cue.readUInt32LE(12 + 24 + 20)]).toEqual([12_000, 20_000]);
  });

  it('writes MIDI markers, a REAPER ZIP, Audacity labels, CSV and JSON', async () => {
    const { fileId, wav } = await commentedMix();
    const midi = new tonejs.Midi((await exported(fileId, 'format=midi')).bytes);
    expect(midi.header.meta.filter((m) => m.type === 'marker').map((m) => [Math.round(midi.header.ticksToSeconds(m.ticks) * 1000), m.text])).toEqual([
      [1000, 'Bo: Kick too loud'],
      [2000, 'Ana: Guitar "buzz"'],
      [3500, 'Ana: Guitar "buzz" (end)'],
    ]);

    const rpp = await exported(fileId, 'format=rpp');
    expect(rpp.response.status, rpp.bytes.toString()).toBe(200);
    expect(rpp.response.headers.get('content-disposition')).toContain('filename="Mix v1.zip"');
    const zip = await readZip(rpp.bytes);
    expect(zip.entries.map((entry) => entry.name)).toEqual(['Mix v1.RPP', 'Mix v1.wav']);
    expect(zip.entries[1]!.bytes.equals(wav)).toBe(true);
    expect(zip.entries[0]!.bytes.toString()).toContain('MARKER 2 2.000000 \'Ana: Guitar "buzz"\' 1');

    expect((await exported(fileId, 'format=audacity')).bytes.toString()).toBe('1.000000\t1.000000\tBo: Kick too loud\n2.000000\t3.500000\tAna: Guitar "buzz"\n');
    const csv = (await exported(fileId, 'format=csv&status=open')).bytes.toString();
    expect(csv.split('\r\n')[0]).toBe('#,Start,End,Author,Comment,Status,Version');
    expect(csv).toContain('"Kick\ntoo loud"');
    expect(csv).toContain(',,,Bo,More air overall,open,1');
    const json = JSON.parse((await exported(fileId, 'format=json&offsetMs=250')).bytes.toString());
    expect(json.offsetMs).toBe(250);
    expect(json.markers.map((m: { atMs: number | null }) => m.atMs)).toEqual([1250, 1250, 2250, null]);
  });

  it('marks a guest in every format, also one who calls themselves by a member\'s name', async () => {
    const { fileId } = await commentedMix();
    const link = await expectStatus(api.request('POST', `/api/files/${fileId}/share`, { token: admin.accessToken, json: { allowComments: true } }), 201);
    await expectStatus(api.request('POST', `/api/share/${link.token}/comments`, { json: { name: 'Bo', body: 'Louder', atMs: 3000 } }), 201);
    const labels = (await exported(fileId, 'format=audacity')).bytes.toString();
    expect(labels).toContain('\tBo: Kick too loud\n');
    expect(labels).toContain('\tBo (guest): Louder\n');
    expect((await exported(fileId, 'format=csv')).bytes.toString()).toContain(',Bo (guest),Louder,open,1');
    const json = JSON.parse((await exported(fileId, 'format=json')).bytes.toString());
    expect(json.markers.filter((m: { guest: boolean }) => m.guest).map((m: { name: string }) => m.name)).toEqual(['Bo (guest): Louder']);
    const midi = new tonejs.Midi((await exported(fileId, 'format=midi')).bytes);
    expect(midi.header.meta.filter((m) => m.type === 'marker').map((m) => m.text)).toContain('Bo (guest): Louder');
  });

  it('exports a WAV of 9,000 empty chunks, and refuses one whose chunks lie beyond the export\'s reads, with 400 naming format', async () => {
    const seeded = await seedProject(api, admin.accessToken);
    await addMember(api, admin.accessToken, seeded.id, member);
    const wav = toneWav(1);
    /** The tone with `count` chunks of `size` bytes between its "fmt " and "data" chunks. */
    const padded = (count: number, size: number): Buffer => {
      const chunk = Buffer.alloc(8 + size);
      chunk.write('JUNK', 0, 'latin1');
      chunk.writeUInt32LE(size, 4);
      return Buffer.concat([wav.subarray(0, 36), ...Array.from({ length: count }, () => chunk), wav.subarray(36)]);
    };
    const many = await expectStatus(upload(api, admin.accessToken, seeded.cutId, 'Many chunks.wav', padded(9_000, 0)), 201);
    await comment(many.id, { body: 'here', atMs: 500 });
    const { response, bytes } = await exported(many.id, 'format=wav');
    expect(response.status).toBe(200);
    expect(Number(response.headers.get('content-length'))).toBe(bytes.length);
    expect(sha256(dataChunk(bytes))).toBe(sha256(dataChunk(wav)));
    expect(bytes.indexOf('JUNK')).toBe(36);

    const spread = await expectStatus(upload(api, admin.accessToken, seeded.cutId, 'Spread.wav', padded(40, 100 * 1024)), 201);
    const refused = await exported(spread.id, 'format=wav');
    expect(refused.response.status).toBe(400);
    const problem = JSON.parse(refused.bytes.toString());
    expect(problem.errors[0].field).toBe('format');
    expect(problem.detail).toMatch(/spread wider than 16 reads/);
  });

  it('puts the REAPER project and the mix at the ZIP\'s root whatever the name holds', async () => {
    const seeded = await seedProject(api, admin.accessToken);
    await addMember(api, admin.accessToken, seeded.id, member);
    const wav = toneWav(1);
    for (const name of ['/Mix/v1', '../../Mix', 'C:Mix v1']) {
      const file = await expectStatus(upload(api, admin.accessToken, seeded.cutId, 'mix.wav', wav, name), 201);
      await comment(file.id, { body: 'here', atMs: 500 });
      const rpp = await exported(file.id, 'format=rpp');
      expect(rpp.response.status, rpp.bytes.toString()).toBe(200);
      const zip = await readZip(rpp.bytes);
      const mix = `${name.replace(/[/:]/g, '_')}.wav`;
      expect(zip.entries.map((entry) => entry.name)).toEqual([`${name.replace(/[/:]/g, '_')}.RPP`, mix]);
      expect(zip.entries[0]!.bytes.toString()).toContain(`FILE "${mix}"`);
    }
  });

  it('refuses, naming format, a marker the format cannot place: a WAV cue past 2^32 sample frames, a MIDI gap past 38 hours', async () => {
    const seeded = await seedProject(api, admin.accessToken);
    await addMember(api, admin.accessToken, seeded.id, member);
    // The tone's header made 96 kHz: a day's offset is frame 8,294,400,000.
    const wav = toneWav(1);
    wav.writeUInt32LE(96_000, 24);
    wav.writeUInt32LE(192_000, 28);
    const file = await expectStatus(upload(api, admin.accessToken, seeded.cutId, 'Fast.wav', wav), 201);
    await comment(file.id, { body: 'here', atMs: 10 });
    const refused = await exported(file.id, 'format=wav&offsetMs=86400000');
    expect(refused.response.status).toBe(400);
    const problem = JSON.parse(refused.bytes.toString());
    expect(problem.errors[0].field).toBe('format');
    expect(problem.detail).toMatch(/past the last sample frame a WAV cue point holds/);
    expect((await exported(file.id, 'format=wav&offsetMs=40000000')).response.status).toBe(200);

    // A file without analysis takes a comment at any time: 555 hours in.
    const unanalysed = await storeFileDirectly(server, seeded.cutId, admin.user.id);
    await comment(unanalysed.id, { body: 'far', atMs: 2_000_000_000 });
    const midi = await exported(unanalysed.id, 'format=midi');
    expect(midi.response.status).toBe(400);
    expect(JSON.parse(midi.bytes.toString()).errors[0].field).toBe('format');
    expect((await exported(unanalysed.id, 'format=audacity')).response.status).toBe(200);
  });

  it('refuses a missing or unknown format, and wav for a file that is not a WAV', async () => {
    const { fileId } = await commentedMix();
    for (const query of ['', 'format=aiff', 'format=midi&offsetMs=-1']) {
      const { response, bytes } = await exported(fileId, query);
      expect(response.status).toBe(400);
      expect(JSON.parse(bytes.toString()).errors[0].field).toBe(query.includes('offsetMs') ? 'offsetMs' : 'format');
    }
    const seeded = await seedProject(api, admin.accessToken);
    await addMember(api, admin.accessToken, seeded.id, member);
    const mp3 = await storeFileDirectly(server, seeded.cutId, admin.user.id);
    const { response, bytes } = await exported(mp3.id, 'format=wav');
    expect(response.status).toBe(400);
    expect(JSON.parse(bytes.toString()).errors[0].field).toBe('format');
  });
});

describe('free text: one rule for every field, ranges that fit the columns', () => {
  it('refuses NUL, other C0 and C1 controls and bidirectional controls in bodies, notes and descriptions with 400, keeps TAB and LF', async () => {
    const { fileId, id: projectId } = await band();
    const hostile = ['a\u0000b', 'a\u0007b', 'a\u0085b', 'a\u202Eb', 'a\u2066b'];
    for (const text of hostile) {
      expect((await post(fileId, { body: text })).status, JSON.stringify(text)).toBe(400);
      expect((await api.request('PUT', `/api/files/${fileId}/review`, { token: member.accessToken, json: { state: 'approved', note: text } })).status, JSON.stringify(text)).toBe(400);
      expect((await api.request('PUT', `/api/projects/${projectId}`, { token: admin.accessToken, json: { description: text } })).status, JSON.stringify(text)).toBe(400);
    }
    const kept = await comment(fileId, { body: 'verse\tchorus\nbridge' });
    expect(kept.body).toBe('verse\tchorus\nbridge');
    const review = await expectStatus(api.request('PUT', `/api/files/${fileId}/review`, { token: member.accessToken, json: { state: 'approved', note: 'line one\r\nline two' } }), 200);
    expect(review.note).toBe('line one\nline two');
  });

  it('refuses a time past the column (int4) with 400, not 500', async () => {
    const { fileId } = await band();
    const response = await post(fileId, { body: 'far away', atMs: 2 ** 31 });
    expect(response.status).toBe(400);
    expect(response.body.errors).toEqual([expect.objectContaining({ field: 'atMs' })]);
    expect((await post(fileId, { body: 'end too far', atMs: 0, endMs: 2 ** 31 })).status).toBe(400);
  });
});
