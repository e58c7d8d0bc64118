import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectStatus } from './authz/fixture.js';
import { sampleBytes, upload, uploadForm, userWithCut } from './support/files.js';
import { client } from './support/http.js';
import { startTestServer, type TestServer } from './support/server.js';

// §16 session folders, the server's side: `path` on File records and uploads (multipart and tus), unique among
// the latest versions of a cut's series (also in the database), renames through versionOf, and the SESSION type.

let server: TestServer;
let api: ReturnType<typeof client>;
let owner: Awaited<ReturnType<typeof userWithCut>>;

beforeAll(async () => {
  server = await startTestServer();
  api = client(server.url);
  owner = await userWithCut(api);
});
afterAll(() => server?.close());

const TUS = { 'tus-resumable': '1.0.0' };
const b64 = (text: string) => Buffer.from(text).toString('base64');
const metadata = (fields: Record<string, string>) =>
  Object.entries(fields)
    .map(([key, value]) => `${key} ${b64(value)}`)
    .join(',');

/** Distinct WAV bytes per call. */
let salt = 0;
const wav = () => {
  const bytes = sampleBytes('wav', 600);
  bytes.writeUInt32BE(++salt, 500);
  return bytes;
};
const projectFile = (text = `session ${++salt}`) => Buffer.from(text);

const withPath = (path: string, bytes: Buffer, fileName: string, extra: { name: string; value: string }[] = [], cutId = owner.cutId) =>
  uploadForm(api, owner.token, [{ name: 'cutId', value: cutId }, { name: 'path', value: path }, ...extra, { name: 'file', value: bytes, fileName }]);

const newCut = async (name: string): Promise<string> =>
  (await expectStatus(api.request('POST', `/api/vibes/${owner.vibeId}/cuts`, { token: owner.token, json: { name } }), 201)).id;

function tusCreate(fields: Record<string, string>, length: number) {
  return api.request('POST', '/api/uploads', { token: owner.token, headers: { ...TUS, 'upload-length': String(length), 'upload-metadata': metadata(fields) } });
}

function tusPatch(url: string, bytes: Buffer) {
  return api.request('PATCH', url, {
    token: owner.token,
    body: new Uint8Array(bytes),
    headers: { ...TUS, 'content-type': 'application/offset+octet-stream', 'upload-offset': '0' },
  });
}

describe('path', () => {
  it('is stored NFC-normalised, shown on every File, and listed with ?latest=true', async () => {
    const cutId = await newCut('Paths listed');
    const decomposed = 'Audio Files/Cafe\u0301 take 1.wav';
    const take = await expectStatus(withPath(decomposed, wav(), 'take.wav', [], cutId), 201);
    expect(take.path).toBe('Audio Files/Caf\u00e9 take 1.wav');
    const plain = await expectStatus(upload(api, owner.token, cutId, 'mix.wav', wav()), 201);
    expect(plain.path).toBeNull();
    expect((await expectStatus(api.request('GET', `/api/files/${take.id}`, { token: owner.token }), 200)).path).toBe(take.path);
    const listed = await expectStatus(api.request('GET', `/api/cuts/${cutId}?latest=true`, { token: owner.token }), 200);
    expect(listed.files.map((file: any) => [file.id, file.path])).toEqual([
      [take.id, take.path],
      [plain.id, null],
    ]);
  });

  it('refuses what is not a relative POSIX path of 1–1024 characters with 400 naming path, before any file is stored', async () => {
    const refused = [
      '',
      '/absolute.wav',
      'a\\b.wav',
      'a//b.wav',
      'a/./b.wav',
      '../b.wav',
      'dir/',
      'tab\there.wav',
      `${'x'.repeat(256)}.wav`,
      `${'é'.repeat(128)}.wav`, // 256 UTF-8 bytes in one segment
      `${'a/'.repeat(511)}ab.wav`, // 1028 characters
    ];
    for (const path of refused) {
      const response = await withPath(path, wav(), 'take.wav');
      expect(response.status, JSON.stringify(path)).toBe(400);
      expect(response.body.errors[0].field).toBe('path');
      const created = await tusCreate({ cutId: owner.cutId, filename: 'take.wav', path }, 600);
      expect(created.status, JSON.stringify(path)).toBe(400);
      expect(created.body.errors[0].field).toBe('path');
    }
    // At the limits: 255 bytes in a segment, 1024 characters in all.
    const longest = `${'a/'.repeat(510)}${'b'.repeat(4)}`;
    expect([...longest].length).toBe(1024);
    await expectStatus(withPath(longest, wav(), 'take.wav'), 201);
    await expectStatus(withPath(`${'x'.repeat(251)}.wav`, wav(), 'take.wav'), 201);
    const cut = await expectStatus(api.request('GET', `/api/cuts/${owner.cutId}`, { token: owner.token }), 200);
    expect(cut.files.every((file: any) => file.path === null || refused.every((path) => path !== file.path))).toBe(true);
  });

  it('refuses the reserved paths on every upload (multipart, tus, a new version), with 400 naming path', async () => {
    const cutId = await newCut('Paths reserved');
    const reserved = [
      '.git/config',
      'Audio/.GIT/commondir',
      'sub/.hg/hgrc',
      '.svn/entries',
      '.band/manifest.json',
      'git~1/config', // .git's Windows short name
      '.g\u200cit/config', // .git to HFS+, which ignores U+200C
      '.bandignore',
      '.BandIgnore',
      'CON',
      'Audio/nul.wav',
      'com1.tar.gz',
      'LPT9/take.wav',
      'take.',
      'Audio /take.wav',
      'take 1: intro.wav',
      'take.wav::$DATA',
    ];
    const series = await expectStatus(withPath('Bounces/kept.wav', wav(), 'a.wav', [], cutId), 201);
    for (const path of reserved) {
      for (const response of [
        await withPath(path, wav(), 'take.wav', [], cutId),
        await tusCreate({ cutId, filename: 'take.wav', path }, 600),
        await withPath(path, wav(), 'take.wav', [{ name: 'versionOf', value: series.id }], cutId),
        await tusCreate({ versionOf: series.id, filename: 'take.wav', path }, 600),
      ]) {
        expect(response.status, JSON.stringify(path)).toBe(400);
        expect(response.body.code).toBe('VALIDATION_FAILED');
        expect(response.body.errors[0].field).toBe('path');
      }
    }
    // Below the top level a .bandignore is a file like any other; so are names that only hold the reserved ones.
    for (const path of ['Audio/.bandignore', 'my.git/x.wav', '.gitignore', 'console.wav', 'com10.wav']) await expectStatus(withPath(path, wav(), 'take.wav', [], cutId), 201);
    const listed = await expectStatus(api.request('GET', `/api/cuts/${cutId}?latest=true`, { token: owner.token }), 200);
    expect(listed.files.map((file: any) => file.path).sort()).toEqual(['.gitignore', 'Audio/.bandignore', 'Bounces/kept.wav', 'com10.wav', 'console.wav', 'my.git/x.wav']);
  });

  it('refuses a new version without a path of a series whose path is reserved (stored before the rule): it must move', async () => {
    const cutId = await newCut('Paths reserved before');
    const planted = await expectStatus(withPath('Bounces/hook.wav', wav(), 'a.wav', [], cutId), 201);
    await server.sql`update file_series set path = '.git/hooks/take.wav', path_key = '.git/hooks/take.wav' where id = ${planted.series.id}`;
    const multipart = await uploadForm(api, owner.token, [{ name: 'versionOf', value: planted.id }, { name: 'file', value: wav(), fileName: 'a.wav' }]);
    const tus = await tusCreate({ versionOf: planted.id, filename: 'a.wav' }, 600);
    for (const response of [multipart, tus]) {
      expect(response.status).toBe(400);
      expect(response.body.errors[0]).toMatchObject({ field: 'path' });
      expect(response.body.errors[0].message).toMatch(/\.git\/hooks\/take\.wav/);
    }
    // With a path of its own the version moves the series out of it.
    const moved = await expectStatus(withPath('Bounces/hook.wav', wav(), 'a.wav', [{ name: 'versionOf', value: planted.id }], cutId), 201);
    expect(moved).toMatchObject({ path: 'Bounces/hook.wav', series: { id: planted.series.id, version: 2 } });
  });

  it('is unique among the latest versions of a cut, compared after NFC with case folding: 409 PATH_TAKEN unless versionOf names its series', async () => {
    const cutId = await newCut('Paths unique');
    const first = await expectStatus(withPath('Session/Straße Mix.wav', wav(), 'a.wav', [], cutId), 201);
    for (const twin of ['Session/Straße Mix.wav', 'session/STRASSE MIX.WAV', 'SESSION/strasse mix.wav'.normalize('NFD')]) {
      const taken = await withPath(twin, wav(), 'a.wav', [], cutId);
      expect(taken.status, twin).toBe(409);
      expect(taken.body.code).toBe('PATH_TAKEN');
      const tus = await tusCreate({ cutId, filename: 'a.wav', path: twin }, 600);
      expect(tus.status, twin).toBe(409);
      expect(tus.body.code).toBe('PATH_TAKEN');
    }
    // As a version of its series the path is the series' own; other cuts have their own folders.
    const v2 = await expectStatus(withPath('session/strasse mix.wav', wav(), 'a.wav', [{ name: 'versionOf', value: first.id }], cutId), 201);
    expect(v2).toMatchObject({ path: 'session/strasse mix.wav', series: { id: first.id, version: 2 } });
    await expectStatus(withPath('session/strasse mix.wav', wav(), 'a.wav', [], await newCut('Paths elsewhere')), 201);
  });

  it('moves the series with versionOf and another path (every version shows it), keeps it without one, and frees the old path', async () => {
    const cutId = await newCut('Paths renamed');
    const v1 = await expectStatus(withPath('Bounces/old.wav', wav(), 'a.wav', [], cutId), 201);
    const v2 = await expectStatus(uploadForm(api, owner.token, [{ name: 'versionOf', value: v1.id }, { name: 'file', value: wav(), fileName: 'a.wav' }]), 201);
    expect(v2.path).toBe('Bounces/old.wav');
    const other = await expectStatus(withPath('Bounces/other.wav', wav(), 'a.wav', [], cutId), 201);
    // Onto a path another series holds: refused, nothing moves.
    const onto = await withPath('bounces/OTHER.wav', wav(), 'a.wav', [{ name: 'versionOf', value: v1.id }], cutId);
    expect(onto.status).toBe(409);
    expect(onto.body.code).toBe('PATH_TAKEN');
    const v3 = await expectStatus(withPath('Bounces/new.wav', wav(), 'a.wav', [{ name: 'versionOf', value: v1.id }], cutId), 201);
    expect(v3).toMatchObject({ path: 'Bounces/new.wav', series: { id: v1.id, version: 3 } });
    const versions = await expectStatus(api.request('GET', `/api/files/${v1.id}/versions`, { token: owner.token }), 200);
    expect(versions.versions.map((file: any) => file.path)).toEqual(['Bounces/new.wav', 'Bounces/new.wav', 'Bounces/new.wav']);
    // A series that had no path gets one the same way; the old path is free again.
    const unplaced = await expectStatus(upload(api, owner.token, cutId, 'loose.wav', wav()), 201);
    await expectStatus(withPath('Bounces/old.wav', wav(), 'a.wav', [{ name: 'versionOf', value: unplaced.id }], cutId), 201);
    expect((await expectStatus(api.request('GET', `/api/files/${other.id}`, { token: owner.token }), 200)).path).toBe('Bounces/other.wav');
  });

  it('is taken once however uploads race: the database refuses the second series at completion (tus), and its upload is gone', async () => {
    const cutId = await newCut('Paths raced');
    const bytes = wav();
    // Both are created while the path is free; the one that completes second finds it taken.
    const first = await tusCreate({ cutId, filename: 'a.wav', path: 'Race/take.wav' }, bytes.length);
    const second = await tusCreate({ cutId, filename: 'a.wav', path: 'race/TAKE.wav' }, bytes.length);
    expect([first.status, second.status]).toEqual([201, 201]);
    const won = await tusPatch(second.headers.get('location')!, bytes);
    expect(won.status).toBe(204);
    const lost = await tusPatch(first.headers.get('location')!, bytes);
    expect(lost.status).toBe(409);
    expect(lost.body.code).toBe('PATH_TAKEN');
    const cut = await expectStatus(api.request('GET', `/api/cuts/${cutId}`, { token: owner.token }), 200);
    expect(cut.files.map((file: any) => file.path)).toEqual(['race/TAKE.wav']);
    expect((await api.request('HEAD', first.headers.get('location')!, { token: owner.token, headers: TUS })).status).toBe(404);
  });

  it('is unique in the database itself: a second series row at a taken path key is refused', async () => {
    const cutId = await newCut('Paths in the database');
    const taken = await expectStatus(withPath('Db/take.wav', wav(), 'a.wav', [], cutId), 201);
    const [row] = await server.sql<{ path_key: string }[]>`select path_key from file_series where id = ${taken.id}`;
    expect(row!.path_key).toBe('db/take.wav');
    await expect(
      server.sql`insert into file_series (id, cut_id, path, path_key) values (gen_random_uuid(), ${cutId}, 'DB/Take.wav', 'db/take.wav')`,
    ).rejects.toMatchObject({ code: '23505' });
  });

  it('takes a path on a resumable upload (Upload-Metadata path)', async () => {
    const cutId = await newCut('Paths resumable');
    const bytes = projectFile();
    const created = await tusCreate({ cutId, filename: 'Song.ptx', path: 'Song/Song.ptx' }, bytes.length);
    expect(created.status).toBe(201);
    const done = await tusPatch(created.headers.get('location')!, bytes);
    expect(done.status).toBe(204);
    const file = await expectStatus(api.request('GET', `/api/files/${done.headers.get('band-file-id')}`, { token: owner.token }), 200);
    expect(file).toMatchObject({ path: 'Song/Song.ptx', type: 'SESSION', mimeType: 'application/octet-stream', size: bytes.length });
  });
});

describe('SESSION files', () => {
  it('are any other extension uploaded with a path: octet-stream, bytes unchecked, counted under other; without a path still 415', async () => {
    const user = await userWithCut(api);
    const as = (path: string | null, bytes: Buffer, fileName: string) =>
      uploadForm(api, user.token, [
        { name: 'cutId', value: user.cutId },
        ...(path === null ? [] : [{ name: 'path', value: path }]),
        { name: 'file', value: bytes, fileName },
      ]);
    const refused = await as(null, projectFile(), 'Song.ptx');
    expect(refused.status).toBe(415);
    expect(refused.body.code).toBe('UNSUPPORTED_FILE_TYPE');
    const session = await expectStatus(as('Song/Song.ptx', projectFile('not a signature of anything'), 'Song.ptx'), 201);
    expect(session).toMatchObject({ type: 'SESSION', mimeType: 'application/octet-stream', name: 'Song.ptx', analysis: 'unsupported', audio: null });
    // A known extension keeps its type and its leading-byte check, path or not.
    const wrong = await as('Song/mix.wav', projectFile(), 'mix.wav');
    expect(wrong.status).toBe(415);
    const audio = await expectStatus(as('Song/mix.wav', wav(), 'mix.wav'), 201);
    expect(audio.type).toBe('CUT');
    const stats = await expectStatus(api.request('GET', '/api/files/storage', { token: user.token }), 200);
    expect(stats.breakdown.other).toEqual({ size: session.size, count: 1 });
    expect(stats.breakdown.audio).toEqual({ size: audio.size, count: 1 });
    expect(stats.totalSize).toBe(session.size + audio.size);
  });

  it('take a version without the path again (the series has one) and stay of their type', async () => {
    const v1 = await expectStatus(withPath('Song/Song.als', projectFile(), 'Song.als'), 201);
    const v2 = await expectStatus(uploadForm(api, owner.token, [{ name: 'versionOf', value: v1.id }, { name: 'file', value: projectFile(), fileName: 'Song.als' }]), 201);
    expect(v2).toMatchObject({ type: 'SESSION', path: 'Song/Song.als', series: { id: v1.id, version: 2 } });
  });

  it('are limited to 500 MiB, refused before reading on a resumable upload', async () => {
    const over = await tusCreate({ cutId: owner.cutId, filename: 'Song.cpr', path: 'Song/Song.cpr' }, 500 * 1024 * 1024 + 1);
    expect(over.status).toBe(413);
    expect(over.body.code).toBe('FILE_TOO_LARGE');
  });

  it('are served as attachments everywhere: download, media path and share links (the page offers a download, no player)', async () => {
    const file = await expectStatus(withPath('Song/Song.RPP', projectFile('<REAPER_PROJECT 0.1>'), 'Song.RPP'), 201);
    const auth = { authorization: `Bearer ${owner.token}` };
    const download = await fetch(`${server.url}/api/files/${file.id}/download`, { headers: auth });
    expect(download.headers.get('content-disposition')).toMatch(/^attachment;/);
    expect(download.headers.get('content-type')).toBe('application/octet-stream');
    const media = await fetch(`${server.url}${file.url}`, { headers: auth });
    expect(media.status).toBe(200);
    expect(media.headers.get('content-disposition')).toMatch(/^attachment;/);
    expect(await media.text()).toBe('<REAPER_PROJECT 0.1>');
    const link = await expectStatus(api.request('POST', `/api/files/${file.id}/share`, { token: owner.token, json: {} }), 201);
    const shared = await fetch(`${server.url}/api/share/${link.token}`);
    expect(shared.headers.get('content-disposition')).toMatch(/^attachment;/);
    const page = await fetch(`${server.url}/share/${link.token}`);
    const html = await page.text();
    expect(html).not.toContain('<audio');
    expect(html).toContain('download=1');
  });
});

describe('limits', () => {
  it('states 4 GiB as Tus-Max-Size, and takes audio (AIFF too) up to 2 GiB and ZIPs up to 4 GiB, refused only past them', async () => {
    const GiB = 1024 ** 3;
    const options = await api.request('OPTIONS', '/api/uploads');
    expect(options.headers.get('tus-max-size')).toBe(String(4 * GiB));
    // Creating reserves no bytes: a resumable upload of the full length is checked against the limit, then terminated.
    for (const { filename, limit } of [
      { filename: 'long.aiff', limit: 2 * GiB },
      { filename: 'long.aif', limit: 2 * GiB },
      { filename: 'long.wav', limit: 2 * GiB },
      { filename: 'stems.zip', limit: 4 * GiB },
    ]) {
      const fits = await tusCreate({ cutId: owner.cutId, filename }, limit);
      expect(fits.status, filename).toBe(201);
      await api.request('DELETE', fits.headers.get('location')!, { token: owner.token, headers: TUS });
      const over = await tusCreate({ cutId: owner.cutId, filename }, limit + 1);
      expect(over.status, filename).toBe(413);
    }
  });
});
