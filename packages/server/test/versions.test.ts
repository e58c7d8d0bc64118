import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMember, expectStatus } from './authz/fixture.js';
import { sampleBytes, upload, uploadForm, userWithCut } from './support/files.js';
import { client } from './support/http.js';
import { multipartUpload, openSocket, requestHead } from './support/raw-http.js';
import { startTestServer, type TestServer } from './support/server.js';
import { readZip } from './support/zip.js';

// §14 Versions: series on every File, versionOf on uploads (multipart and tus), unchanged uploads refused before
// their bytes, the versions list, ?latest=true, archives and whole-series deletes.

let server: TestServer;
let api: ReturnType<typeof client>;
let owner: Awaited<ReturnType<typeof userWithCut>>;

beforeAll(async () => {
  server = await startTestServer();
  api = client(server.url);
  owner = await userWithCut(api);
});
afterAll(() => server?.close());

const entryNames = async (response: Response) => (await readZip(Buffer.from(await response.arrayBuffer()))).entries.map((entry) => entry.name);
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
/** Distinct bytes of a type per call, so each version differs. */
let salt = 0;
const mix = (extension = 'wav') => {
  const bytes = sampleBytes(extension, 600);
  bytes.writeUInt32BE(++salt, 500);
  return bytes;
};

const newVersion = (versionOf: string, bytes: Buffer, fileName = 'mix.wav', extra: { name: string; value: string }[] = []) =>
  uploadForm(api, owner.token, [{ name: 'versionOf', value: versionOf }, ...extra, { name: 'file', value: bytes, fileName }]);

describe('versions', () => {
  it('numbers versions of a series, keeps the latest display name and shows series and review on every File', async () => {
    const v1 = await expectStatus(upload(api, owner.token, owner.cutId, 'mix.wav', mix(), 'Song mix'), 201);
    expect(v1.series).toEqual({ id: v1.id, version: 1, latest: true, count: 1 });
    expect(v1.review).toEqual({ approved: 0, changesRequested: 0, openComments: 0, ready: false });

    // No cutId: the series' cut; no name: the latest version's.
    const v2 = await expectStatus(newVersion(v1.id, mix(), 'bounce-final.wav'), 201);
    expect(v2).toMatchObject({ cutId: owner.cutId, name: 'Song mix', series: { id: v1.id, version: 2, latest: true, count: 2 } });
    // Any version names the series; query parameter works as the field does.
    const form = new FormData();
    form.append('file', new Blob([new Uint8Array(mix())]), 'mix.wav');
    const v3 = await expectStatus(api.request('POST', `/api/files/upload?versionOf=${v2.id}`, { token: owner.token, body: form }), 201);
    expect(v3.series).toEqual({ id: v1.id, version: 3, latest: true, count: 3 });

    await expectStatus(api.request('POST', `/api/files/${v3.id}/comments`, { token: owner.token, json: { body: 'louder', atMs: 10 } }), 201);
    await expectStatus(api.request('PUT', `/api/files/${v2.id}/review`, { token: owner.token, json: { state: 'approved' } }), 200);

    const listed = await expectStatus(api.request('GET', `/api/files/${v2.id}/versions`, { token: owner.token }), 200);
    expect(listed.seriesId).toBe(v1.id);
    expect(listed.versions.map((f: any) => [f.id, f.series.version, f.series.latest, f.series.count])).toEqual([
      [v1.id, 1, false, 3],
      [v2.id, 2, false, 3],
      [v3.id, 3, true, 3],
    ]);
    // Reviews are per version; open comments count the whole series.
    expect(listed.versions.map((f: any) => f.review)).toEqual([
      { approved: 0, changesRequested: 0, openComments: 1, ready: false },
      { approved: 1, changesRequested: 0, openComments: 1, ready: false },
      { approved: 0, changesRequested: 0, openComments: 1, ready: false },
    ]);
    const reviews = await expectStatus(api.request('GET', `/api/files/${v2.id}/reviews`, { token: owner.token }), 200);
    expect(listed.versions[1].review).toEqual(reviews.summary);

    // A deleted version's number is not given again; the series id stays.
    await expectStatus(api.request('DELETE', `/api/files/${v3.id}`, { token: owner.token }), 200);
    await expectStatus(api.request('DELETE', `/api/files/${v1.id}`, { token: owner.token }), 200);
    const v4 = await expectStatus(newVersion(v2.id, mix()), 201);
    expect(v4.series).toEqual({ id: v1.id, version: 4, latest: true, count: 2 });
  });

  it('refuses a version in another cut or of another type (400 naming versionOf), and unknown or invisible files (404)', async () => {
    const v1 = await expectStatus(upload(api, owner.token, owner.cutId, 'mix.wav', mix()), 201);
    const otherCut = await expectStatus(api.request('POST', `/api/vibes/${owner.vibeId}/cuts`, { token: owner.token, json: { name: 'Other cut' } }), 201);
    const elsewhere = await newVersion(v1.id, mix(), 'mix.wav', [{ name: 'cutId', value: otherCut.id }]);
    expect(elsewhere.status).toBe(400);
    expect(elsewhere.body.errors[0].field).toBe('versionOf');
    const otherType = await newVersion(v1.id, mix('zip'), 'stems.zip');
    expect(otherType.status).toBe(400);
    expect(otherType.body.errors[0].field).toBe('versionOf');
    // Same type, another format: a CUT stays a CUT.
    await expectStatus(newVersion(v1.id, mix('flac'), 'mix.flac'), 201);

    expect((await newVersion('00000000-0000-4000-8000-000000000000', mix())).status).toBe(404);
    const stranger = await userWithCut(api);
    const invisible = await uploadForm(api, stranger.token, [
      { name: 'versionOf', value: v1.id },
      { name: 'file', value: mix(), fileName: 'mix.wav' },
    ]);
    expect(invisible.status).toBe(404);
    expect((await expectStatus(api.request('GET', `/api/files/${v1.id}/versions`, { token: owner.token }), 200)).versions).toHaveLength(2);
  });

  it('gives 10 concurrent uploads of one series distinct consecutive numbers', async () => {
    const v1 = await expectStatus(upload(api, owner.token, owner.cutId, 'mix.wav', mix()), 201);
    const uploads = await Promise.all(Array.from({ length: 10 }, () => newVersion(v1.id, mix())));
    expect(uploads.map((response) => response.status)).toEqual(Array(10).fill(201));
    expect(uploads.map((response) => response.body.series.version).sort((a, b) => a - b)).toEqual([2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
  });

  it('answers 412 UNCHANGED with the latest fileId when If-None-Match is its sha256, storing nothing', async () => {
    const bytes = mix();
    const v1 = await expectStatus(upload(api, owner.token, owner.cutId, 'mix.wav', bytes), 201);
    const form = new FormData();
    form.append('versionOf', v1.id);
    form.append('file', new Blob([new Uint8Array(bytes)]), 'mix.wav');
    const refused = await api.request('POST', '/api/files/upload', { token: owner.token, body: form, headers: { 'if-none-match': `"${sha256(bytes)}"` } });
    expect(refused.status).toBe(412);
    expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(refused.body).toMatchObject({ code: 'UNCHANGED', status: 412, fileId: v1.id });
    // Another sha256: a new version.
    const changed = await api.request('POST', '/api/files/upload', { token: owner.token, body: form, headers: { 'if-none-match': `"${'0'.repeat(64)}"` } });
    expect(changed.status).toBe(201);
    // It compares with the latest version only.
    const again = await api.request('POST', `/api/files/upload?versionOf=${v1.id}`, {
      token: owner.token,
      body: form,
      headers: { 'if-none-match': `"${sha256(bytes)}"` },
    });
    expect(again.status).toBe(412);
    expect(again.body.fileId).toBe(changed.body.id);
    expect((await expectStatus(api.request('GET', `/api/files/${v1.id}/versions`, { token: owner.token }), 200)).versions).toHaveLength(2);
  });

  it('answers UNCHANGED as soon as the versionOf field is read, before any byte of the file part', async () => {
    const bytes = mix();
    const v1 = await expectStatus(upload(api, owner.token, owner.cutId, 'mix.wav', bytes), 201);
    const body = multipartUpload({ versionOf: v1.id }, 'mix.wav', bytes.length);
    const socket = await openSocket(server.url);
    let received = '';
    socket.setEncoding('latin1');
    const answered = new Promise<string>((resolve) => {
      socket.on('data', (chunk: string) => {
        received += chunk;
        if (received.includes('\r\n\r\n') && received.includes('"code"')) resolve(received);
      });
      socket.once('close', () => resolve(received));
    });
    // The head, the versionOf field and the file part's headers: the file's bytes are held back.
    socket.write(
      requestHead('POST', '/api/files/upload', {
        Authorization: `Bearer ${owner.token}`,
        'Content-Type': body.contentType,
        'Content-Length': body.contentLength,
        'If-None-Match': `"${sha256(bytes)}"`,
      }) + body.head,
    );
    const answer = await answered;
    socket.destroy();
    expect(answer).toMatch(/^HTTP\/1\.1 412 /);
    expect(answer).toContain(`"fileId":"${v1.id}"`);
  });

  it('takes versionOf in tus Upload-Metadata, refusing an unchanged one on the creating POST', async () => {
    const bytes = mix();
    const v1 = await expectStatus(upload(api, owner.token, owner.cutId, 'mix.wav', bytes), 201);
    const metadata = (fields: Record<string, string>) =>
      Object.entries(fields)
        .map(([key, value]) => `${key} ${Buffer.from(value).toString('base64')}`)
        .join(',');
    const tus = { 'Tus-Resumable': '1.0.0', 'Upload-Length': String(bytes.length) };
    const unchanged = await fetch(`${server.url}/api/uploads`, {
      method: 'POST',
      headers: { authorization: `Bearer ${owner.token}`, ...tus, 'Upload-Metadata': metadata({ versionOf: v1.id, filename: 'mix.wav' }), 'If-None-Match': `"${sha256(bytes)}"` },
    });
    expect(unchanged.status).toBe(412);
    expect(await unchanged.json()).toMatchObject({ code: 'UNCHANGED', fileId: v1.id });
    const otherType = await fetch(`${server.url}/api/uploads`, {
      method: 'POST',
      headers: { authorization: `Bearer ${owner.token}`, ...tus, 'Upload-Metadata': metadata({ versionOf: v1.id, filename: 'stems.zip' }) },
    });
    expect(otherType.status).toBe(400);
    expect((await otherType.json()).errors[0].field).toBe('versionOf');

    const changed = mix();
    const created = await fetch(`${server.url}/api/uploads`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${owner.token}`,
        ...tus,
        'Upload-Metadata': metadata({ versionOf: v1.id, filename: 'mix.wav' }),
        'Content-Type': 'application/offset+octet-stream',
      },
      body: new Uint8Array(changed),
    });
    expect(created.status).toBe(201);
    const fileId = created.headers.get('band-file-id')!;
    const file = await expectStatus(api.request('GET', `/api/files/${fileId}`, { token: owner.token }), 200);
    expect(file.series).toEqual({ id: v1.id, version: 2, latest: true, count: 2 });
    expect(file.sha256).toBe(sha256(changed));
  });

  it('lists only the latest versions with ?latest=true, and archives the latest or (versions=all) every version', async () => {
    const own = await userWithCut(api);
    const a1 = await expectStatus(upload(api, own.token, own.cutId, 'a.wav', mix(), 'Alpha'), 201);
    const solo = await expectStatus(upload(api, own.token, own.cutId, 'solo.mp3', mix('mp3'), 'Solo'), 201);
    const a2 = await expectStatus(
      uploadForm(api, own.token, [{ name: 'versionOf', value: a1.id }, { name: 'file', value: mix(), fileName: 'a.wav' }]),
      201,
    );
    const cut = await expectStatus(api.request('GET', `/api/cuts/${own.cutId}`, { token: own.token }), 200);
    expect(cut.files.map((f: any) => f.id)).toEqual([a1.id, solo.id, a2.id]);
    const latest = await expectStatus(api.request('GET', `/api/cuts/${own.cutId}?latest=true`, { token: own.token }), 200);
    expect(latest.files.map((f: any) => f.id)).toEqual([solo.id, a2.id]);
    const project = await expectStatus(api.request('GET', `/api/projects/${own.projectId}?latest=true`, { token: own.token }), 200);
    expect(project.vibes[0].cuts[0].files.map((f: any) => f.id)).toEqual([solo.id, a2.id]);

    const archive = await fetch(`${server.url}/api/cuts/${own.cutId}/archive`, { headers: { authorization: `Bearer ${own.token}` } });
    expect(await entryNames(archive)).toEqual(['Solo.mp3', 'Alpha.wav']);
    const all = await fetch(`${server.url}/api/cuts/${own.cutId}/archive?versions=all`, { headers: { authorization: `Bearer ${own.token}` } });
    expect(await entryNames(all)).toEqual(['Alpha (v1).wav', 'Solo (v1).mp3', 'Alpha (v2).wav']);
  });

  it('deletes a whole series for a project ADMIN or a member who uploaded every version', async () => {
    const own = await userWithCut(api);
    const member = await api.register();
    await addMember(api, own.token, own.projectId, member);
    const v1 = await expectStatus(upload(api, member.accessToken, own.cutId, 'mix.wav', mix()), 201);
    const v2 = await expectStatus(
      uploadForm(api, member.accessToken, [{ name: 'versionOf', value: v1.id }, { name: 'file', value: mix(), fileName: 'mix.wav' }]),
      201,
    );
    // The member uploaded both: allowed. Another member's version in the series: refused, nothing deleted.
    const byMember = await expectStatus(api.request('DELETE', `/api/files/${v2.id}?series=all`, { token: member.accessToken }), 200);
    expect(byMember).toEqual({ seriesId: v1.id, deleted: 2, trashedUntil: expect.stringMatching(/Z$/) });
    expect((await api.request('GET', `/api/files/${v1.id}`, { token: own.token })).status).toBe(404);

    const w1 = await expectStatus(upload(api, member.accessToken, own.cutId, 'mix.wav', mix()), 201);
    await expectStatus(uploadForm(api, own.token, [{ name: 'versionOf', value: w1.id }, { name: 'file', value: mix(), fileName: 'mix.wav' }]), 201);
    expect((await api.request('DELETE', `/api/files/${w1.id}?series=all`, { token: member.accessToken })).status).toBe(403);
    expect((await expectStatus(api.request('GET', `/api/files/${w1.id}/versions`, { token: own.token }), 200)).versions).toHaveLength(2);
    expect(await expectStatus(api.request('DELETE', `/api/files/${w1.id}?series=all`, { token: own.token }), 200)).toEqual({ seriesId: w1.id, deleted: 2, trashedUntil: expect.stringMatching(/Z$/) });
    expect((await api.request('GET', `/api/files/${w1.id}/versions`, { token: own.token })).status).toBe(404);
  });
});
