import { createHash, randomUUID } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { crc32 } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMember } from './authz/fixture.js';
import { sampleBytes, upload, userWithCut } from './support/files.js';
import { client } from './support/http.js';
import { startTestServer, type TestServer } from './support/server.js';
import { readZip, unzipTest } from './support/zip.js';

let server: TestServer;
let api: ReturnType<typeof client>;
let owner: Awaited<ReturnType<typeof userWithCut>>;

beforeAll(async () => {
  server = await startTestServer();
  api = client(server.url);
  owner = await userWithCut(api);
});
afterAll(() => server?.close());

async function newCut(name: string): Promise<string> {
  const response = await api.request('POST', `/api/vibes/${owner.vibeId}/cuts`, { token: owner.token, json: { name } });
  expect(response.status).toBe(201);
  return response.body.id;
}

async function put(cutId: string, fileName: string, bytes: Buffer, name?: string) {
  const response = await upload(api, owner.token, cutId, fileName, bytes, name);
  expect(response.status).toBe(201);
  return response.body as { id: string };
}

/** A GET of the archive with node:http, so the bytes that arrive are counted as they are, not as fetch decodes them. */
function getRaw(path: string, token: string, method = 'GET'): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(`${server.url}${path}`, { method, headers: { authorization: `Bearer ${token}` } }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks) }));
      response.on('error', reject);
    });
    request.on('error', reject);
    request.end();
  });
}

describe('GET /api/cuts/:id/archive', () => {
  it('is a stored ZIP of every file, bytes and CRCs as stored, names as downloads, exact Content-Length', async () => {
    const cutId = await newCut('Take 3 – Bläser');
    const files = [
      { fileName: 'kick.wav', bytes: sampleBytes('wav', 70_000), name: 'Kick' },
      { fileName: 'bass.flac', bytes: sampleBytes('flac', 1_000), name: 'Bass.flac' },
      { fileName: 'stems.zip', bytes: sampleBytes('zip', 300_000), name: 'Stems' },
      { fileName: 'cover.png', bytes: sampleBytes('png', 200), name: 'Cover' },
    ];
    for (const file of files) await put(cutId, file.fileName, file.bytes, file.name);

    const response = await getRaw(`/api/cuts/${cutId}/archive`, owner.token);
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe('application/zip');
    expect(Number(response.headers['content-length'])).toBe(response.body.length);
    expect(response.headers['content-disposition']).toBe(
      `attachment; filename="Take 3 _ Bl_ser.zip"; filename*=UTF-8''${encodeURIComponent('Take 3 – Bläser.zip')}`,
    );
    expect(response.headers['accept-ranges']).toBe('none');

    const { entries } = await readZip(response.body);
    expect(entries.map((entry) => entry.name)).toEqual(['Kick.wav', 'Bass.flac', 'Stems.zip', 'Cover.png']);
    entries.forEach((entry, i) => {
      expect(entry.compressionMethod).toBe(0);
      expect(entry.bytes.equals(files[i]!.bytes)).toBe(true);
      expect(entry.crc32).toBe(crc32(files[i]!.bytes));
    });
    const tested = await unzipTest(response.body);
    expect(tested.output).toContain('No errors detected');
    expect(tested.code).toBe(0);
  });

  it('numbers repeated display names: take.wav, take (2).wav, take (3).wav', async () => {
    const cutId = await newCut('Repeats');
    const bytes = [1, 2, 3].map((n) => sampleBytes('wav', 100 + n));
    for (const b of bytes) await put(cutId, 'take.wav', b, 'take');
    await put(cutId, 'TAKE.mp3', sampleBytes('mp3', 50), 'TAKE');
    const response = await getRaw(`/api/cuts/${cutId}/archive`, owner.token);
    const { entries } = await readZip(response.body);
    expect(entries.map((entry) => entry.name)).toEqual(['take.wav', 'take (2).wav', 'take (3).wav', 'TAKE.mp3']);
    entries.slice(0, 3).forEach((entry, i) => expect(entry.bytes.equals(bytes[i]!)).toBe(true));
  });

  it('sanitises display names into safe entry names: a drive prefix, .., backslashes never fail the archive', async () => {
    const cutId = await newCut('Hostile names');
    const bytes = [1, 2, 3].map((n) => sampleBytes('wav', 100 + n));
    await put(cutId, 'a.wav', bytes[0]!, 'C:x');
    await put(cutId, 'b.wav', bytes[1]!, '..\\..\\evil');
    await put(cutId, 'c.wav', bytes[2]!, '/abs|path');
    const response = await getRaw(`/api/cuts/${cutId}/archive`, owner.token);
    expect(response.status).toBe(200);
    const { entries } = await readZip(response.body);
    expect(entries.map((entry) => entry.name)).toEqual(['C_x.wav', '.._.._evil.wav', '_abs_path.wav']);
    entries.forEach((entry, i) => expect(entry.bytes.equals(bytes[i]!)).toBe(true));
    expect((await unzipTest(response.body)).code).toBe(0);
  });

  it('answers an empty ZIP for a cut without files', async () => {
    const cutId = await newCut('Nothing yet');
    const response = await getRaw(`/api/cuts/${cutId}/archive`, owner.token);
    expect(response.status).toBe(200);
    expect(Number(response.headers['content-length'])).toBe(22);
    expect(response.body.length).toBe(22);
    expect((await readZip(response.body)).entryCount).toBe(0);
  });

  it('answers HEAD with the headers of the GET and no body', async () => {
    const cutId = await newCut('Head');
    await put(cutId, 'a.wav', sampleBytes('wav', 5_000));
    const get = await getRaw(`/api/cuts/${cutId}/archive`, owner.token);
    const head = await getRaw(`/api/cuts/${cutId}/archive`, owner.token, 'HEAD');
    expect(head.status).toBe(200);
    expect(head.body.length).toBe(0);
    for (const name of ['content-length', 'content-type', 'content-disposition']) expect(head.headers[name]).toBe(get.headers[name]);
  });

  it('is 404 for a stranger, a site ADMIN who is not a member and an unknown cut; 401 without credentials; any member may', async () => {
    const cutId = await newCut('Private');
    const stranger = await api.register();
    expect((await api.request('GET', `/api/cuts/${cutId}/archive`, { token: stranger.accessToken })).status).toBe(404);
    expect((await api.request('HEAD', `/api/cuts/${cutId}/archive`, { token: stranger.accessToken })).status).toBe(404);
    expect((await api.request('GET', `/api/cuts/${randomUUID()}/archive`, { token: owner.token })).status).toBe(404);
    expect((await api.request('GET', `/api/cuts/not-a-uuid/archive`, { token: owner.token })).status).toBe(404);
    expect((await api.request('GET', `/api/cuts/${cutId}/archive`)).status).toBe(401);
    const member = await api.register();
    await addMember(api, owner.token, owner.projectId, member);
    expect((await getRaw(`/api/cuts/${cutId}/archive`, member.accessToken)).status).toBe(200);
  });

  it('streams the stored files: a file whose bytes vanished cuts the connection instead of sending a ZIP that lies', async () => {
    const cutId = await newCut('Vanished');
    const kept = sampleBytes('wav', 2_000);
    await put(cutId, 'kept.wav', kept);
    const gone = await put(cutId, 'gone.wav', sampleBytes('wav', 3_000));
    await server.stored.delete(`files/${gone.id}.wav`);
    const outcome = await getRaw(`/api/cuts/${cutId}/archive`, owner.token).then(
      (response) => Number(response.headers['content-length']) === response.body.length,
      () => false,
    );
    expect(outcome).toBe(false);
    // The server keeps serving.
    expect((await api.request('GET', '/api/health')).status).toBe(200);
  });

  it('hashes as it was sent: the same cut gives the same archive twice', async () => {
    const cutId = await newCut('Twice');
    await put(cutId, 'a.wav', sampleBytes('wav', 4_000));
    const sha = async () => createHash('sha256').update((await getRaw(`/api/cuts/${cutId}/archive`, owner.token)).body).digest('hex');
    expect(await sha()).toBe(await sha());
  });
});
