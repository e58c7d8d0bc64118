import { createHash } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { FILE_TYPES } from '@bandcollab/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMember as addProjectMember } from './authz/fixture.js';
import { multipartPieces, sampleBytes, upload, uploadForm, userWithCut } from './support/files.js';
import { client } from './support/http.js';
import { startTestServer, type TestServer } from './support/server.js';

const LIMITS = { CUT: 4096, STEM: 8192, IMAGE: 2048 };
/** How a refusal names the type of a file with that extension. */
const LIMIT_WORDS: Record<string, string> = { wav: 'Audio files', zip: 'Stems', gif: 'Images' };

let server: TestServer;
let api: ReturnType<typeof client>;
let owner: Awaited<ReturnType<typeof userWithCut>>;

beforeAll(async () => {
  server = await startTestServer({
    MAX_AUDIO_BYTES: String(LIMITS.CUT),
    MAX_STEM_BYTES: String(LIMITS.STEM),
    MAX_IMAGE_BYTES: String(LIMITS.IMAGE),
  });
  api = client(server.url);
  owner = await userWithCut(api);
});
afterAll(() => server?.close());

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const storedFiles = () => server.stored.list('files');
// An upload's temporary files; a preview job of a file uploaded earlier may be encoding into tmp/ meanwhile
// (preview-<fileId>-….m4a, analysis/job.ts), which is not an upload's residue.
const tempFiles = async () => (await readdir(path.join(server.dataDir, 'tmp'))).filter((name) => !name.startsWith('preview-'));
const fileRows = async () => Number((await server.sql`select count(*)::int as n from files`)[0]!.n);

/** Runs an upload that must be refused and checks that it left neither bytes nor a row. */
async function expectNoResidue<R extends { status: number }>(run: () => Promise<R>, status: number): Promise<R> {
  const [filesBefore, rowsBefore] = [await storedFiles(), await fileRows()];
  const response = await run();
  expect(response.status).toBe(status);
  expect(await storedFiles()).toEqual(filesBefore);
  expect(await tempFiles()).toEqual([]);
  expect(await fileRows()).toBe(rowsBefore);
  return response;
}

async function addMember(role: 'MEMBER' | 'ADMIN') {
  const user = await api.register();
  await addProjectMember(api, owner.token, owner.projectId, user, role);
  return user;
}

describe('upload', () => {
  it.each(Object.entries(FILE_TYPES))('stores a .%s file with the type and MIME type of the table', async (extension, rule) => {
    const bytes = sampleBytes(extension, 700);
    const response = await upload(api, owner.token, owner.cutId, `take.${extension.toUpperCase()}`, bytes);
    expect(response.status).toBe(201);
    const file = response.body;
    expect(file).toEqual({
      id: expect.any(String),
      cutId: owner.cutId,
      name: `take.${extension.toUpperCase()}`,
      path: null,
      type: rule.type,
      size: 700,
      mimeType: rule.mimeType,
      url: `/uploads/files/${file.id}.${extension}`,
      sha256: sha256(bytes),
      uploadedBy: { id: owner.user.user.id, name: owner.user.user.name, avatarUrl: null },
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      analysis: rule.type === 'IMAGE' ? 'unsupported' : 'pending',
      audio: null,
      preview: { status: rule.type === 'CUT' ? 'pending' : 'none', url: null, bitrate: null, bytes: null, durationMs: null },
      stems: null,
      series: { id: file.id, version: 1, latest: true, count: 1 },
      review: { approved: 0, changesRequested: 0, openComments: 0, ready: false },
      reviewRequests: [],
    });
    expect(response.headers.get('location')).toBe(`/api/files/${file.id}`);
    expect(await server.stored.read(`files/${file.id}.${extension}`)).toEqual(bytes);
    // The background analysis may have run meanwhile (these bytes only look like audio: it fails).
    const analysis = rule.type === 'IMAGE' ? 'unsupported' : expect.stringMatching(/^(pending|failed)$/);
    // Its preview follows the analysis: failed with it.
    const preview = rule.type === 'CUT' ? { ...file.preview, status: expect.stringMatching(/^(pending|failed)$/) } : file.preview;
    expect((await api.request('GET', `/api/files/${file.id}`, { token: owner.token })).body).toEqual({ ...file, analysis, preview });
  });

  it('takes fields in any order and a display name; ignores the MIME type the client claims', async () => {
    const bytes = sampleBytes('ogg', 300);
    const form = new FormData();
    form.append('file', new Blob([new Uint8Array(bytes)], { type: 'image/png' }), 'x.ogg');
    form.append('name', '  Night take  ');
    form.append('cutId', owner.cutId);
    const response = await api.request('POST', '/api/files/upload', { token: owner.token, body: form });
    expect(response.status).toBe(201);
    expect(response.body).toMatchObject({ name: 'Night take', mimeType: 'audio/ogg', type: 'CUT', sha256: sha256(bytes) });
  });

  it('refuses a renamed file whose bytes do not match its extension with 415, leaving nothing behind', async () => {
    const response = await expectNoResidue(() => upload(api, owner.token, owner.cutId, 'song.mp3', sampleBytes('png', 900)), 415);
    expect(response.body.code).toBe('UNSUPPORTED_FILE_TYPE');
    expect(response.body.detail).toContain('.mp3');
    expect(response.body.detail).toContain('.zip');
    expect(response.body.detail).toContain('.webp');
  });

  it.each(['notes.txt', 'song', 'archive.tar.gz', '.mp3', 'evil.mp3.exe'])('refuses %s with 415', async (fileName) => {
    const response = await expectNoResidue(() => upload(api, owner.token, owner.cutId, fileName, sampleBytes('mp3', 100)), 415);
    expect(response.body.code).toBe('UNSUPPORTED_FILE_TYPE');
  });

  /** 64 bytes that begin with `head`. */
  const startingWith = (head: string | number[]) => {
    const bytes = Buffer.alloc(64, 0x11);
    (typeof head === 'string' ? Buffer.from(head, 'latin1') : Buffer.from(head)).copy(bytes);
    return bytes;
  };

  it.each([
    ['mp3', 'an MPEG-1 layer III frame sync', [0xff, 0xfb, 0x90]],
    ['mp3', 'an MPEG-2.5 frame sync', [0xff, 0xe3]],
    ['mp3', 'the bare 11-bit frame sync', [0xff, 0xe0]],
    ['aac', 'an ADTS frame sync', [0xff, 0xf1]],
    ['aac', 'an ADTS frame sync with CRC', [0xff, 0xf0]],
    ['aac', 'ADIF', 'ADIF'],
    ['m4a', 'ftyp at offset 4', '\x00\x00\x00\x18ftypmp42'],
    ['wav', 'RIFF…WAVE', 'RIFF\x24\x00\x00\x00WAVE'],
    ['wav', 'RF64…WAVE', 'RF64\xff\xff\xff\xffWAVE'],
    ['wav', 'BW64…WAVE', 'BW64\xff\xff\xff\xffWAVE'],
    ['zip', 'an empty archive (PK\\x05\\x06)', 'PK\x05\x06'],
    ['jpeg', 'FF D8 FF', [0xff, 0xd8, 0xff, 0xe1]],
    ['gif', 'GIF87a', 'GIF87a'],
  ])('takes a .%s that starts with %s', async (extension, _label, head) => {
    const response = await upload(api, owner.token, owner.cutId, `lead.${extension}`, startingWith(head));
    expect(response.status).toBe(201);
    expect(response.body.mimeType).toBe(FILE_TYPES[extension]!.mimeType);
  });

  it.each([
    ['mp3', 'no frame sync', [0xff, 0xd8]],
    ['aac', 'an 11-bit sync only', [0xff, 0xe1]],
    ['m4a', 'ftyp at offset 0', 'ftypM4A \x00\x00\x00\x18'],
    ['wav', 'RIFF…WEBP', 'RIFF\x24\x00\x00\x00WEBP'],
    ['webp', 'RIFF…WAVE', 'RIFF\x24\x00\x00\x00WAVE'],
    ['zip', 'a spanned-archive marker (PK\\x07\\x08)', 'PK\x07\x08'],
    ['png', 'a JPEG signature', [0xff, 0xd8, 0xff, 0xe0]],
  ])('refuses a .%s that starts with %s with 415', async (extension, _label, head) => {
    const response = await expectNoResidue(() => upload(api, owner.token, owner.cutId, `lead.${extension}`, startingWith(head)), 415);
    expect(response.body.code).toBe('UNSUPPORTED_FILE_TYPE');
  });

  it('refuses a file shorter than its signature with 415', async () => {
    await expectNoResidue(() => upload(api, owner.token, owner.cutId, 'tiny.png', Buffer.from([0x89, 0x50])), 415);
  });

  it.each([
    ['an empty file', [{ name: 'cutId', value: 'CUT' }, { name: 'file', value: Buffer.alloc(0), fileName: 'a.mp3' }], 'file'],
    ['no file', [{ name: 'cutId', value: 'CUT' }], 'file'],
    ['no cutId', [{ name: 'file', value: sampleBytes('mp3', 50), fileName: 'a.mp3' }], 'cutId'],
    ['a cutId that is no UUID', [{ name: 'cutId', value: 'nope' }, { name: 'file', value: sampleBytes('mp3', 50), fileName: 'a.mp3' }], 'cutId'],
    ['a name with control characters', [{ name: 'cutId', value: 'CUT' }, { name: 'name', value: 'a\u0007b' }, { name: 'file', value: sampleBytes('mp3', 50), fileName: 'a.mp3' }], 'name'],
    ['a name of 201 characters', [{ name: 'cutId', value: 'CUT' }, { name: 'name', value: 'n'.repeat(201) }, { name: 'file', value: sampleBytes('mp3', 50), fileName: 'a.mp3' }], 'name'],
    ['two file parts', [{ name: 'cutId', value: 'CUT' }, { name: 'file', value: sampleBytes('mp3', 50), fileName: 'a.mp3' }, { name: 'file', value: sampleBytes('mp3', 50), fileName: 'b.mp3' }], null],
  ])('answers 400 for %s', async (_label, parts, field) => {
    const withCut = parts.map((part) => (part.value === 'CUT' ? { ...part, value: owner.cutId } : part));
    const response = await expectNoResidue(() => uploadForm(api, owner.token, withCut), 400);
    expect(response.body.code).toBe('VALIDATION_FAILED');
    if (field) expect(response.body.errors?.[0]?.field).toBe(field);
  });

  it('answers 415 UNSUPPORTED_MEDIA_TYPE for a body that is not multipart', async () => {
    const response = await api.request('POST', '/api/files/upload', { token: owner.token, json: { cutId: owner.cutId } });
    expect(response.status).toBe(415);
    expect(response.body.code).toBe('UNSUPPORTED_MEDIA_TYPE');
  });

  it('needs authentication, and 404s a cut the caller cannot see, whichever order the fields come in', async () => {
    const bytes = sampleBytes('mp3', 50);
    expect((await upload(api, '', owner.cutId, 'a.mp3', bytes)).status).toBe(401);
    const stranger = await api.register();
    const first = await expectNoResidue(() => upload(api, stranger.accessToken, owner.cutId, 'a.mp3', bytes), 404);
    expect(first.body.code).toBe('NOT_FOUND');
    await expectNoResidue(
      () => uploadForm(api, stranger.accessToken, [{ name: 'file', value: bytes, fileName: 'a.mp3' }, { name: 'cutId', value: owner.cutId }]),
      404,
    );
    await expectNoResidue(() => upload(api, owner.token, '00000000-0000-4000-8000-000000000000', 'a.mp3', bytes), 404);
  });

  it('leaves neither bytes nor a row when the commit fails after the bytes were renamed into place', async () => {
    // A deferred trigger fails at commit: the last moment, after the rename inside the transaction.
    await server.sql.unsafe(`
      create function refuse_files() returns trigger language plpgsql as $$ begin raise exception 'disk full'; end $$;
      create constraint trigger refuse_files after insert on files deferrable initially deferred
        for each row execute function refuse_files();`);
    try {
      const response = await expectNoResidue(() => upload(api, owner.token, owner.cutId, 'doomed.mp3', sampleBytes('mp3', 500)), 500);
      expect(response.body.code).toBe('INTERNAL');
      expect(response.text).not.toContain('disk full');
    } finally {
      await server.sql.unsafe('drop trigger refuse_files on files; drop function refuse_files();');
    }
  });

  it('keeps only the base name of a client file name, without control characters', async () => {
    for (const [sent, kept] of [
      ['../../etc/passwd.mp3', 'passwd.mp3'],
      ['C:\\Users\\me\\take.mp3', 'take.mp3'],
      ['..\\..\\x.mp3', 'x.mp3'],
    ]) {
      const response = await upload(api, owner.token, owner.cutId, sent!, sampleBytes('mp3', 64));
      expect(response.status).toBe(201);
      expect(response.body.name).toBe(kept);
    }
    // Control characters can only arrive percent-encoded (RFC 5987 filename*), which busboy decodes.
    const { contentType, head, tail } = multipartPieces(owner.cutId, 'ignored.mp3');
    const encodedHead = head.toString('latin1').replace('filename="ignored.mp3"', "filename*=UTF-8''..%2F%0D%0Atab%09and%01bell%7F%E2%99%AB.mp3");
    const body = Buffer.concat([Buffer.from(encodedHead, 'latin1'), sampleBytes('mp3', 64), tail]);
    const response = await api.request('POST', '/api/files/upload', { token: owner.token, body, headers: { 'content-type': contentType } });
    expect(response.status).toBe(201);
    expect(response.body.name).toBe('tabandbell\u266b.mp3');
    for (const name of await storedFiles()) expect(name).toMatch(/^[0-9a-f-]{36}\.[a-z0-9]+$/);
  });

  it('refuses a client file name with a bidirectional control (400 on file), as a resumable upload\'s filename', async () => {
    const { contentType, head, tail } = multipartPieces(owner.cutId, 'ignored.mp3');
    const encodedHead = head.toString('latin1').replace('filename="ignored.mp3"', "filename*=UTF-8''evil%E2%80%AEavw.mp3");
    const body = Buffer.concat([Buffer.from(encodedHead, 'latin1'), sampleBytes('mp3', 64), tail]);
    const response = await api.request('POST', '/api/files/upload', { token: owner.token, body, headers: { 'content-type': contentType } });
    expect(response.status).toBe(400);
    expect(response.body.errors).toEqual([{ field: 'file', message: 'must not contain bidirectional control characters' }]);
  });
});

describe('limits', () => {
  it.each([
    ['wav', LIMITS.CUT],
    ['zip', LIMITS.STEM],
    ['gif', LIMITS.IMAGE],
  ])('takes a .%s of exactly the limit (%i bytes) and refuses one byte more with 413', async (extension, limit) => {
    const exact = await upload(api, owner.token, owner.cutId, `max.${extension}`, sampleBytes(extension, limit));
    expect(exact.status).toBe(201);
    expect(exact.body.size).toBe(limit);
    const over = await expectNoResidue(() => upload(api, owner.token, owner.cutId, `over.${extension}`, sampleBytes(extension, limit + 1)), 413);
    expect(over.body.code).toBe('FILE_TOO_LARGE');
    expect(over.body.detail).toBe(`${LIMIT_WORDS[extension]} (.${extension}) are limited to ${limit} bytes`);
  });
});

describe('read and delete', () => {
  it('gets a file for members only; non-UUID ids are 404', async () => {
    const file = (await upload(api, owner.token, owner.cutId, 'a.flac', sampleBytes('flac', 80))).body;
    const stranger = await api.register();
    expect((await api.request('GET', `/api/files/${file.id}`, { token: stranger.accessToken })).status).toBe(404);
    expect((await api.request('GET', '/api/files/not-a-uuid', { token: owner.token })).status).toBe(404);
    expect((await api.request('GET', `/api/files/${file.id}`)).status).toBe(401);
  });

  it('lets the uploader and a project ADMIN delete, not another MEMBER; the bytes stay until the trash is purged', async () => {
    const member = await addMember('MEMBER');
    const admin = await addMember('ADMIN');
    const byOwner = (await upload(api, owner.token, owner.cutId, 'a.mp3', sampleBytes('mp3', 80))).body;
    const byMember = (await upload(api, member.accessToken, owner.cutId, 'b.mp3', sampleBytes('mp3', 80))).body;

    const refused = await api.request('DELETE', `/api/files/${byOwner.id}`, { token: member.accessToken });
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe('FORBIDDEN');

    const own = await api.request('DELETE', `/api/files/${byMember.id}`, { token: member.accessToken });
    expect(own.status).toBe(200);
    expect(own.body).toEqual({ id: byMember.id, deleted: true, trashedUntil: expect.stringMatching(/Z$/) });
    const byAdmin = await api.request('DELETE', `/api/files/${byOwner.id}`, { token: admin.accessToken });
    expect(byAdmin.status).toBe(200);

    const stored = await storedFiles();
    expect(stored).toContain(`${byOwner.id}.mp3`);
    expect(stored).toContain(`${byMember.id}.mp3`);
    expect((await api.request('GET', `/api/files/${byOwner.id}`, { token: owner.token })).status).toBe(404);
    expect((await api.request('DELETE', `/api/files/${byOwner.id}`, { token: owner.token })).status).toBe(404);
  });
});

describe('the pending_objects ledger', () => {
  it('an upload settles its pending_objects entry, a failed one removes object and entry; the purge removes a day-old entry\'s object', async () => {
    const pending = async () => (await server.sql<{ key: string }[]>`select key from pending_objects order by key`).map((row) => row.key);
    const kept = (await upload(api, owner.token, owner.cutId, 'settled.mp3', sampleBytes('mp3', 80))).body;
    // A cut named after the file: the object is written, then recording it fails (no such cut).
    const filesBefore = (await storedFiles()).sort();
    const refused = await uploadForm(api, owner.token, [
      { name: 'file', value: sampleBytes('mp3', 80), fileName: 'unrecorded.mp3' },
      { name: 'cutId', value: '22222222-2222-4222-8222-222222222222' },
    ]);
    expect(refused.status).toBe(404);
    expect((await storedFiles()).sort()).toEqual(filesBefore);
    expect(await pending()).toEqual([]);
    // A server killed between an object and its row left these: one a day ago, one just now (maybe an upload in flight).
    const [dead, live] = ['33333333-3333-4333-8333-333333333333.mp3', '44444444-4444-4444-8444-444444444444.mp3'];
    for (const name of [dead, live]) await server.stored.write(`files/${name}`, 'x');
    await server.sql`insert into pending_objects (key, created_at) values
      (${`files/${dead}`}, now() - interval '1 day 1 minute'), (${`files/${live}`}, now())`;
    const restarted = await startTestServer({ DATA_DIR: server.dataDir, DATABASE_URL: server.env.DATABASE_URL! });
    try {
      const stored = await storedFiles();
      expect(stored).toContain(`${kept.id}.mp3`);
      expect(stored).toContain(live);
      expect(stored).not.toContain(dead);
      expect(await pending()).toEqual([`files/${live}`]);
    } finally {
      await restarted.close();
      await server.stored.delete(`files/${live}`);
      await server.sql`delete from pending_objects`;
    }
  });

});
