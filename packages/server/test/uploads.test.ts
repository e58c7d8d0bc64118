import { createHash, randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import net, { type Socket } from 'node:net';
import path from 'node:path';
import * as tus from 'tus-js-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sampleBytes, userWithCut } from './support/files.js';
import { client } from './support/http.js';
import { whenClosed } from './support/raw-http.js';
import { startTestServer, type TestServer } from './support/server.js';
import { openPatch, patchRunning, TUS } from './support/tus.js';
import { until } from './support/until.js';

// Resumable uploads (tus 1.0.0) against the real server: the protocol's answers, what each refusal leaves
// behind, and tus-js-client as an independent client.

const LIMITS = { CUT: 64 * 1024, STEM: 32 * 1024 * 1024, IMAGE: 2048 };

let server: TestServer;
let api: ReturnType<typeof client>;
let owner: Awaited<ReturnType<typeof userWithCut>>;

beforeAll(async () => {
  server = await startTestServer({
    MAX_AUDIO_BYTES: String(LIMITS.CUT),
    MAX_STEM_BYTES: String(LIMITS.STEM),
    MAX_IMAGE_BYTES: String(LIMITS.IMAGE),
    PURGE_INTERVAL_SECONDS: '1',
  });
  api = client(server.url);
  owner = await userWithCut(api);
});
afterAll(() => server?.close());

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const b64 = (text: string) => Buffer.from(text).toString('base64');

function metadata(fields: Record<string, string>): string {
  return Object.entries(fields)
    .map(([key, value]) => `${key} ${b64(value)}`)
    .join(',');
}

async function create(token: string, cutId: string, fileName: string, length: number, extra: Record<string, string> = {}) {
  return api.request('POST', '/api/uploads', {
    token,
    headers: { ...TUS, 'upload-length': String(length), 'upload-metadata': metadata({ cutId, filename: fileName }), ...extra },
  });
}

async function createdUrl(token: string, cutId: string, fileName: string, length: number): Promise<string> {
  const response = await create(token, cutId, fileName, length);
  expect(response.status).toBe(201);
  return response.headers.get('location')!;
}

function patch(token: string, url: string, offset: number, bytes: Buffer, headers: Record<string, string> = {}) {
  return api.request('PATCH', url, {
    token,
    body: new Uint8Array(bytes),
    headers: { ...TUS, 'content-type': 'application/offset+octet-stream', 'upload-offset': String(offset), ...headers },
  });
}

const head = (token: string, url: string) => api.request('HEAD', url, { token, headers: TUS });
const offsetOf = async (url: string) => Number((await head(owner.token, url)).headers.get('upload-offset'));
/** The part size of the store (S3_PART_SIZE_MB's default): an upload's parts and tail are recorded in PostgreSQL. */
const PART_BYTES = 8 * 1024 * 1024;
/** The bytes an upload holds: its recorded parts and tail (the store's multipart upload holds the parts). */
const bytesHeld = async (url: string) => {
  const [row] = await server.sql<{ n: string }[]>`
    select octet_length(tail) + jsonb_array_length(parts)::bigint * ${PART_BYTES} as n from resumable_uploads where id = ${path.basename(url)}`;
  return Number(row!.n);
};
/** Whether an upload left anything behind: its row with bytes, or a multipart upload not yet aborted. */
const leftBehind = async (url: string) =>
  (await server.sql`select 1 from resumable_uploads where id = ${path.basename(url)} and (octet_length(tail) > 0 or multipart_id is not null)`).length +
  (await server.sql`select 1 from abandoned_multipart_uploads`).length;
/**
 * Whether no request holds the upload's lock any more (its advisory lock is gone from pg_locks): the PATCH that
 * held it records its offset before it lets go, so a PATCH sent on seeing the offset alone may still meet 423.
 */
const lockFreed = async (url: string) => !(await patchRunning(server.sql, url));
const checksum = (algorithm: string, bytes: Buffer) => `${algorithm} ${createHash(algorithm).update(bytes).digest('base64')}`;

async function download(token: string, fileId: string): Promise<Buffer> {
  const response = await fetch(`${server.url}/api/files/${fileId}/download`, { headers: { authorization: `Bearer ${token}` } });
  return Buffer.from(await response.arrayBuffer());
}


describe('protocol', () => {
  it('OPTIONS names the version, extensions, largest size and checksum algorithms without authentication', async () => {
    const response = await api.request('OPTIONS', '/api/uploads');
    expect(response.status).toBe(204);
    expect(response.headers.get('tus-version')).toBe('1.0.0');
    expect(response.headers.get('tus-extension')).toBe('creation,creation-with-upload,termination,checksum,expiration');
    expect(response.headers.get('tus-max-size')).toBe(String(LIMITS.STEM));
    expect(response.headers.get('tus-checksum-algorithm')).toBe('sha1,sha256');
  });

  it('answers OPTIONS the same with CORS_ORIGINS set, and lets browsers send and read the tus headers', async () => {
    const withCors = await startTestServer({ CORS_ORIGINS: 'https://app.example.test' });
    try {
      const discovery = await client(withCors.url).request('OPTIONS', '/api/uploads');
      expect(discovery.status).toBe(204);
      expect(discovery.headers.get('tus-version')).toBe('1.0.0');
      expect(discovery.headers.get('tus-checksum-algorithm')).toBe('sha1,sha256');
      const preflight = await client(withCors.url).request('OPTIONS', '/api/uploads/00000000-0000-4000-8000-000000000000', {
        headers: { origin: 'https://app.example.test', 'access-control-request-method': 'PATCH', 'access-control-request-headers': 'upload-offset' },
      });
      expect(preflight.headers.get('access-control-allow-headers')).toContain('upload-offset');
      expect(preflight.headers.get('access-control-expose-headers')).toContain('upload-offset');
      expect(preflight.headers.get('access-control-expose-headers')).toContain('band-file-id');
    } finally {
      await withCors.close();
    }
  });

  it('refuses a request without Tus-Resumable: 1.0.0 with 412', async () => {
    const response = await api.request('POST', '/api/uploads', {
      token: owner.token,
      headers: { 'upload-length': '10', 'upload-metadata': metadata({ cutId: owner.cutId, filename: 'a.wav' }) },
    });
    expect(response.status).toBe(412);
    expect(response.body).toMatchObject({ code: 'VALIDATION_FAILED', errors: [{ field: 'Tus-Resumable', message: 'must be 1.0.0' }] });
    expect(response.headers.get('tus-version')).toBe('1.0.0');
  });

  it('uploads in checksummed chunks and becomes the same File a multipart upload makes', async () => {
    const bytes = sampleBytes('wav', 40_000);
    const created = await create(owner.token, owner.cutId, 'take.wav', bytes.length, {
      'upload-metadata': metadata({ cutId: owner.cutId, filename: 'take.wav', name: 'Take one' }),
    });
    expect(created.status).toBe(201);
    const url = created.headers.get('location')!;
    expect(url).toMatch(/^\/api\/uploads\/[0-9a-f-]{36}$/);
    expect(new Date(created.headers.get('upload-expires')!).getTime()).toBeGreaterThan(Date.now() + 23.9 * 3600 * 1000);

    const first = await patch(owner.token, url, 0, bytes.subarray(0, 10), { 'upload-checksum': checksum('sha1', bytes.subarray(0, 10)) });
    expect(first.status).toBe(204);
    expect(first.headers.get('upload-offset')).toBe('10');
    expect(first.headers.get('band-file-id')).toBeNull();
    const second = await patch(owner.token, url, 10, bytes.subarray(10, 25_000), {
      'upload-checksum': checksum('sha256', bytes.subarray(10, 25_000)),
    });
    expect(second.headers.get('upload-offset')).toBe('25000');
    const last = await patch(owner.token, url, 25_000, bytes.subarray(25_000));
    expect(last.status).toBe(204);
    expect(last.headers.get('upload-offset')).toBe(String(bytes.length));
    const fileId = last.headers.get('band-file-id')!;

    const file = (await api.request('GET', `/api/files/${fileId}`, { token: owner.token })).body;
    expect(file).toMatchObject({ cutId: owner.cutId, name: 'Take one', type: 'CUT', mimeType: 'audio/wav', size: bytes.length, sha256: sha256(bytes) });
    expect(await download(owner.token, fileId)).toEqual(bytes);
    const status = await head(owner.token, url);
    expect(status.status).toBe(200);
    expect(status.headers.get('band-file-id')).toBe(fileId);
    expect(status.headers.get('cache-control')).toBe('no-store');
    expect(await leftBehind(url)).toBe(0);
  });

  it('takes the first bytes with the creation (creation-with-upload)', async () => {
    const bytes = sampleBytes('mp3', 3000);
    const response = await create(owner.token, owner.cutId, 'song.mp3', bytes.length, { 'content-type': 'application/offset+octet-stream' });
    expect(response.status).toBe(201);
    const responseWithBody = await api.request('POST', '/api/uploads', {
      token: owner.token,
      body: new Uint8Array(bytes.subarray(0, 1000)),
      headers: {
        ...TUS,
        'upload-length': String(bytes.length),
        'upload-metadata': metadata({ cutId: owner.cutId, filename: 'song.mp3' }),
        'content-type': 'application/offset+octet-stream',
      },
    });
    expect(responseWithBody.status).toBe(201);
    expect(responseWithBody.headers.get('upload-offset')).toBe('1000');
    const url = responseWithBody.headers.get('location')!;
    const rest = await patch(owner.token, url, 1000, bytes.subarray(1000));
    expect(await download(owner.token, rest.headers.get('band-file-id')!)).toEqual(bytes);
  });

  it('answers a PATCH at the wrong offset with 409 and keeps the upload as it was', async () => {
    const bytes = sampleBytes('flac', 2000);
    const url = await createdUrl(owner.token, owner.cutId, 'a.flac', bytes.length);
    await patch(owner.token, url, 0, bytes.subarray(0, 500));
    const response = await patch(owner.token, url, 400, bytes.subarray(400));
    expect(response.status).toBe(409);
    expect(response.body.code).toBe('OFFSET_MISMATCH');
    expect(await offsetOf(url)).toBe(500);
  });

  it('discards the bytes of a PATCH whose checksum does not match (460)', async () => {
    const bytes = sampleBytes('ogg', 2000);
    const url = await createdUrl(owner.token, owner.cutId, 'a.ogg', bytes.length);
    await patch(owner.token, url, 0, bytes.subarray(0, 500));
    const response = await patch(owner.token, url, 500, bytes.subarray(500), { 'upload-checksum': checksum('sha256', bytes.subarray(0, 10)) });
    expect(response.status).toBe(460);
    expect(response.body.code).toBe('CHECKSUM_MISMATCH');
    expect(await offsetOf(url)).toBe(500);
    expect(await bytesHeld(url)).toBe(500);
    const retried = await patch(owner.token, url, 500, bytes.subarray(500), { 'upload-checksum': checksum('sha256', bytes.subarray(500)) });
    expect(await download(owner.token, retried.headers.get('band-file-id')!)).toEqual(bytes);
  });

  it('answers a second PATCH while one is in progress with 423; a PATCH cut off mid-body keeps what arrived', async () => {
    const bytes = sampleBytes('wav', 30_000);
    const url = await createdUrl(owner.token, owner.cutId, 'b.wav', bytes.length);
    const first = await openPatch(server.url, owner.token, url, 0, bytes.length, bytes.subarray(0, 12_345));
    // The first PATCH holds the lock while it takes its bytes: the second is refused meanwhile.
    await until('the PATCH to be running', () => patchRunning(server.sql, url));
    const second = await patch(owner.token, url, 0, bytes);
    expect(second.status).toBe(423);
    expect(second.body.code).toBe('UPLOAD_LOCKED');
    first.destroy();
    await until("the upload's lock to be freed", () => lockFreed(url));
    expect(await offsetOf(url)).toBe(12_345);
    const rest = await patch(owner.token, url, 12_345, bytes.subarray(12_345));
    expect(rest.status).toBe(204);
    expect(await download(owner.token, rest.headers.get('band-file-id')!)).toEqual(bytes);
  });

  it("refuses a user's 4th PATCH at once with 429 while their 3 trickle, and serves another user's meanwhile", async () => {
    const trickler = await userWithCut(api);
    const bytes = sampleBytes('wav', 30_000);
    const urls: string[] = [];
    for (let i = 0; i < 4; i++) urls.push(await createdUrl(trickler.token, trickler.cutId, `p${i}.wav`, bytes.length));
    const held: Socket[] = [];
    for (const url of urls.slice(0, 3)) {
      held.push(await openPatch(server.url, trickler.token, url, 0, bytes.length, bytes.subarray(0, 100)));
      await until('the PATCH to be running', () => patchRunning(server.sql, url));
    }
    const refused = await patch(trickler.token, urls[3]!, 0, bytes);
    expect(refused.status).toBe(429);
    expect(refused.body.code).toBe('RATE_LIMITED');
    expect(refused.headers.get('retry-after')).toBe('1');
    const other = await userWithCut(api);
    const otherUrl = await createdUrl(other.token, other.cutId, 'other.wav', bytes.length);
    expect((await patch(other.token, otherUrl, 0, bytes)).status).toBe(204);
    expect((await api.request('GET', `/api/cuts/${trickler.cutId}`, { token: trickler.token })).status).toBe(200);
    for (const socket of held) socket.destroy();
    await until('a PATCH beside the trickler to be taken', async () => (await patch(trickler.token, urls[3]!, 0, bytes)).status === 204);
  });

  it('holds the lock where every instance sees it, on no pooled connection; a PATCH whose lock was lost saves nothing', async () => {
    const bytes = sampleBytes('wav', 30_000);
    const url = await createdUrl(owner.token, owner.cutId, 'locked.wav', bytes.length);
    const first = await openPatch(server.url, owner.token, url, 0, bytes.length, bytes.subarray(0, 100));
    let answer = '';
    first.on('data', (chunk: Buffer) => (answer += chunk.toString('latin1')));
    await until('the PATCH to be running', () => patchRunning(server.sql, url));
    const other = await startTestServer({ DATABASE_URL: server.config.databaseUrl! });
    try {
      const elsewhere = await client(other.url).request('PATCH', url, {
        token: owner.token,
        body: new Uint8Array(bytes),
        headers: { ...TUS, 'content-type': 'application/offset+octet-stream', 'upload-offset': '0' },
      });
      expect(elsewhere.status).toBe(423);
    } finally {
      await other.close();
    }
    // Only the locks connection holds it: none of the pool's connections waits on the body.
    const holders = await server.sql<{ pid: number }[]>`
      select pid from pg_locks where locktype = 'advisory' and classid = ${0x74757321}::bigint::oid and granted
        and database = (select oid from pg_database where datname = current_database())`;
    expect(holders).toHaveLength(1);
    // That connection is lost (PostgreSQL frees its locks): the PATCH still running must not record its bytes.
    // With a timeout, pg_terminate_backend returns once the backend is gone: without, its lock could still show
    // as held to the PATCH's fence for a moment (seen once in a TEST_STORAGE=s3 run).
    expect((await server.sql`select pg_terminate_backend(${holders[0]!.pid}, 10000) as gone`)[0]!.gone).toBe(true);
    first.write(bytes.subarray(100));
    await until('the whole answer', async () => answer.endsWith('}'));
    first.destroy();
    // 503 either way: "lock was lost" when the fence sees it, or the database-unreachable answer when the killed
    // connection's error reaches the PATCH first; what matters is that nothing was saved.
    expect(answer).toMatch(/^HTTP\/1\.1 503[\s\S]*"code":"UNAVAILABLE"/);
    expect(await offsetOf(url)).toBe(0);
    const again = await patch(owner.token, url, 0, bytes);
    expect(again.status).toBe(204);
    expect(await download(owner.token, again.headers.get('band-file-id')!)).toEqual(bytes);
  });

  it('cuts a PATCH slower than the minimum rate over a minute, after keeping every byte it received', async () => {
    const bytes = sampleBytes('wav', 30_000);
    const url = await createdUrl(owner.token, owner.cutId, 'slow.wav', bytes.length);
    const socket = await openPatch(server.url, owner.token, url, 0, bytes.length, bytes.subarray(0, 100));
    const answer = whenClosed(socket);
    await until('the PATCH to be running', () => patchRunning(server.sql, url));
    // A minute on the server's clock with 100 bytes: far below the minimum rate.
    server.clock.advance(61);
    socket.write(bytes.subarray(100, 101));
    expect(await answer).toMatch(/^HTTP\/1\.1 503[\s\S]*slower than/);
    // The cut comes after the bytes that arrived: the 100 always, the last one too when it came before the cut.
    const kept = await offsetOf(url);
    expect([100, 101]).toContain(kept);
    const rest = await patch(owner.token, url, kept, bytes.subarray(kept));
    expect(rest.status).toBe(204);
    expect(await download(owner.token, rest.headers.get('band-file-id')!)).toEqual(bytes);
  });

  it('terminates with 415 a renamed .txt sent as .wav, after its first bytes', async () => {
    const text = Buffer.from('These are the lyrics of the song, not audio at all.\n'.repeat(20));
    const url = await createdUrl(owner.token, owner.cutId, 'lyrics.wav', text.length);
    const response = await patch(owner.token, url, 0, text);
    expect(response.status).toBe(415);
    expect(response.body.code).toBe('UNSUPPORTED_FILE_TYPE');
    expect((await head(owner.token, url)).status).toBe(404);
    expect(await leftBehind(url)).toBe(0);
  });

  it('refuses before any byte: an unknown extension (415), an Upload-Length over the limit (413), no length (400), a stranger to the cut (404)', async () => {
    expect((await create(owner.token, owner.cutId, 'notes.txt', 100)).status).toBe(415);
    const tooLarge = await create(owner.token, owner.cutId, 'big.wav', LIMITS.CUT + 1);
    expect(tooLarge.status).toBe(413);
    expect(tooLarge.body.code).toBe('FILE_TOO_LARGE');
    expect((await create(owner.token, owner.cutId, 'stems.zip', LIMITS.CUT + 1)).status).toBe(201);
    const noLength = await api.request('POST', '/api/uploads', {
      token: owner.token,
      headers: { ...TUS, 'upload-defer-length': '1', 'upload-metadata': metadata({ cutId: owner.cutId, filename: 'a.wav' }) },
    });
    expect(noLength.status).toBe(400);
    const stranger = await api.register();
    expect((await create(stranger.accessToken, owner.cutId, 'a.wav', 100)).status).toBe(404);
    expect((await api.request('POST', '/api/uploads', { headers: TUS })).status).toBe(401);
  });

  it("hides an upload from everyone but its creator: a stranger's HEAD, PATCH and DELETE are 404", async () => {
    const bytes = sampleBytes('wav', 1000);
    const url = await createdUrl(owner.token, owner.cutId, 'c.wav', bytes.length);
    const stranger = (await api.register()).accessToken;
    expect((await head(stranger, url)).status).toBe(404);
    expect((await patch(stranger, url, 0, bytes)).status).toBe(404);
    expect((await api.request('DELETE', url, { token: stranger, headers: TUS })).status).toBe(404);
    expect(await offsetOf(url)).toBe(0);
  });

  it('terminates an upload with DELETE: 204, then 404, its bytes gone', async () => {
    const bytes = sampleBytes('wav', 1000);
    const url = await createdUrl(owner.token, owner.cutId, 'd.wav', bytes.length);
    await patch(owner.token, url, 0, bytes.subarray(0, 100));
    const response = await api.request('DELETE', url, { token: owner.token, headers: TUS });
    expect(response.status).toBe(204);
    expect((await head(owner.token, url)).status).toBe(404);
    expect(await leftBehind(url)).toBe(0);
  });

  it('allows 10 incomplete uploads per user; the 11th POST is 429, also when they arrive at once', async () => {
    const user = await userWithCut(api);
    const responses = await Promise.all(Array.from({ length: 14 }, () => create(user.token, user.cutId, 'e.wav', 100)));
    expect(responses.filter((r) => r.status === 201)).toHaveLength(10);
    const refused = responses.filter((r) => r.status === 429);
    expect(refused).toHaveLength(4);
    expect(refused[0]!.body.code).toBe('RATE_LIMITED');
    expect(refused[0]!.headers.get('retry-after')).not.toBeNull();
    const url = responses.find((r) => r.status === 201)!.headers.get('location')!;
    await api.request('DELETE', url, { token: user.token, headers: TUS });
    expect((await create(user.token, user.cutId, 'e.wav', 100)).status).toBe(201);
  });

  it('expires an upload: then 404, and the purge removes its bytes', async () => {
    const bytes = sampleBytes('wav', 1000);
    const url = await createdUrl(owner.token, owner.cutId, 'f.wav', bytes.length);
    await patch(owner.token, url, 0, bytes.subarray(0, 100));
    // 24 hours after its last bytes, as the database's clock sees it.
    await server.sql`update resumable_uploads set expires_at = now() - interval '1 second' where id = ${path.basename(url)}`;
    expect((await head(owner.token, url)).status).toBe(404);
    expect((await patch(owner.token, url, 100, bytes.subarray(100))).status).toBe(404);
    await until('the upload row to go', async () => (await server.sql`select 1 from resumable_uploads where id = ${path.basename(url)}`).length === 0);
    expect(await leftBehind(url)).toBe(0);
  });
});

describe('the rules a multipart upload has', () => {
  it.each([
    ['a NUL', 'take\u0000.wav', 'must not contain control characters'],
    ['a directory', '../take.wav', 'must be a file name without a directory (no / or \\)'],
    ['a backslash', '..\\take.wav', 'must be a file name without a directory (no / or \\)'],
    ['a bidirectional override', 'evil\u202Eavw.zip', 'must not contain bidirectional control characters'],
    ['11,000 characters', `${'x'.repeat(11_000)}.wav`, 'must be at most 200 characters'],
  ])('refuses a filename with %s: 400 on the field filename, nothing stored', async (_what, fileName, message) => {
    const before = await server.sql`select id from resumable_uploads`;
    const response = await create(owner.token, owner.cutId, fileName, 100);
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ code: 'VALIDATION_FAILED', errors: [{ field: 'filename', message }] });
    expect(await server.sql`select id from resumable_uploads`).toEqual(before);
  });

  it('reports a missing filename on the field filename, as a missing cutId on cutId', async () => {
    const response = await api.request('POST', '/api/uploads', {
      token: owner.token,
      headers: { ...TUS, 'upload-length': '100', 'upload-metadata': metadata({ cutId: owner.cutId }) },
    });
    expect(response.status).toBe(400);
    expect(response.body.errors).toEqual([{ field: 'filename', message: 'is required' }]);
    const noCut = await api.request('POST', '/api/uploads', {
      token: owner.token,
      headers: { ...TUS, 'upload-length': '100', 'upload-metadata': metadata({ filename: 'a.wav' }) },
    });
    expect(noCut.body.errors).toEqual([{ field: 'cutId', message: 'is required (or versionOf)' }]);
  });

  it('refuses a bidirectional control in the display name as in every name', async () => {
    const response = await create(owner.token, owner.cutId, 'take.wav', 100, {
      'upload-metadata': metadata({ cutId: owner.cutId, filename: 'take.wav', name: 'Take \u2066one' }),
    });
    expect(response.status).toBe(400);
    expect(response.body.errors).toEqual([{ field: 'name', message: 'must not contain bidirectional control characters' }]);
  });

  it('HEAD repeats the Upload-Metadata of the creation (tus 1.0.0)', async () => {
    const sent = metadata({ cutId: owner.cutId, filename: 'meta.wav', name: 'Meta take' });
    const created = await create(owner.token, owner.cutId, 'meta.wav', 100, { 'upload-metadata': sent });
    const status = await head(owner.token, created.headers.get('location')!);
    expect(status.status).toBe(200);
    const pairs = Object.fromEntries(
      status.headers
        .get('upload-metadata')!
        .split(',')
        .map((pair) => pair.split(' ') as [string, string])
        .map(([key, value]) => [key, Buffer.from(value, 'base64').toString('utf8')]),
    );
    expect(pairs).toEqual({ cutId: owner.cutId, filename: 'meta.wav', name: 'Meta take' });
  });

  it('ends an upload at its maximum age from creation, even one that received bytes a moment ago', async () => {
    const bytes = sampleBytes('wav', 1000);
    const url = await createdUrl(owner.token, owner.cutId, 'old.wav', bytes.length);
    const id = path.basename(url);
    // Created a week ago, as the database's clock sees it; then a PATCH keeps it busy.
    await server.sql`update resumable_uploads set created_at = now() - interval '7 days' where id = ${id}`;
    await patch(owner.token, url, 0, bytes.subarray(0, 100));
    expect((await head(owner.token, url)).status).toBe(404);
    await until('the upload row to go', async () => (await server.sql`select 1 from resumable_uploads where id = ${id}`).length === 0);
  });

  it.each([
    ['its cut', (user: Awaited<ReturnType<typeof userWithCut>>) => api.request('DELETE', `/api/cuts/${user.cutId}`, { token: user.token })],
    ['its account', (user: Awaited<ReturnType<typeof userWithCut>>) => api.request('DELETE', '/api/auth/me', { token: user.token, json: { password: user.user.password } })],
  ])('removes the bytes of an incomplete upload when %s is deleted', async (_what, remove) => {
    const user = await userWithCut(api);
    const bytes = sampleBytes('wav', 1000);
    const url = await createdUrl(user.token, user.cutId, 'partial.wav', bytes.length);
    await patch(user.token, url, 0, bytes.subarray(0, 100));
    expect((await remove(user)).status).toBe(200);
    await until('nothing left behind', async () => (await leftBehind(url)) === 0);
  });
});

describe('an upload whose bytes are gone', () => {
  it('(a database restored from a backup, which holds no partial uploads) is 404 from its next PATCH on', async () => {
    const bytes = sampleBytes('zip', PART_BYTES + 1000);
    const url = await createdUrl(owner.token, owner.cutId, 'h.zip', bytes.length);
    expect((await patch(owner.token, url, 0, bytes.subarray(0, PART_BYTES + 100))).status).toBe(204);
    // The store's multipart upload is not the one the restored row names.
    await server.sql`update resumable_uploads set multipart_id = ${randomUUID()} where id = ${path.basename(url)}`;
    expect((await patch(owner.token, url, PART_BYTES + 100, bytes.subarray(PART_BYTES + 100))).status).toBe(404);
    expect((await head(owner.token, url)).status).toBe(404);
  });
});

describe('tus-js-client', () => {
  function tusUpload(bytes: Buffer, options: Partial<tus.UploadOptions>): tus.Upload {
    return new tus.Upload(bytes, {
      endpoint: `${server.url}/api/uploads`,
      headers: { authorization: `Bearer ${owner.token}` },
      metadata: { cutId: owner.cutId, filename: 'stems.zip' },
      retryDelays: [],
      ...options,
    });
  }

  it('uploads a file in chunks with checksums off and on', async () => {
    const bytes = sampleBytes('zip', 200_000);
    let fileId: string | null = null;
    await new Promise<void>((resolve, reject) => {
      const upload = tusUpload(bytes, {
        chunkSize: 32 * 1024,
        onAfterResponse: (_req, res) => {
          fileId = res.getHeader('Band-File-Id') ?? fileId;
        },
        onSuccess: () => resolve(),
        onError: reject,
      });
      upload.start();
    });
    expect(await download(owner.token, fileId!)).toEqual(bytes);
  });

  it('resumes after its connection is aborted mid-PATCH', async () => {
    const bytes = sampleBytes('zip', 8 * 1024 * 1024);
    // Between client and server, a proxy that stops forwarding the first PATCH after 1 MiB: the client, still
    // sending into the proxy, aborts, and the server keeps the 1 MiB that reached it.
    const proxy = await stallingProxy(1024 * 1024);
    try {
      const endpoint = `${proxy.url}/api/uploads`;
      // One PATCH for the whole file, aborted once the server has the 1 MiB the proxy forwards.
      let failed: Error | null = null;
      const upload = tusUpload(bytes, { endpoint, onError: (error) => void (failed = error) });
      upload.start();
      await until('the upload to be under way', async () => {
        if (failed) throw failed;
        return upload.url !== null && (await patchRunning(server.sql, new URL(upload.url).pathname));
      });
      await upload.abort();
      const firstRun = { url: upload.url! };
      const uploadPath = new URL(firstRun.url).pathname;
      await until('the first bytes to be stored', async () => (await offsetOf(uploadPath)) > 0);
      const kept = await offsetOf(uploadPath);
      expect(kept).toBe(1024 * 1024);

      let fileId: string | null = null;
      let resumedFrom = -1;
      await new Promise<void>((resolve, reject) => {
        const upload = tusUpload(bytes, {
          endpoint,
          uploadUrl: firstRun.url,
          onAfterResponse: (req, res) => {
            if (req.getMethod() === 'HEAD') resumedFrom = Number(res.getHeader('Upload-Offset'));
            fileId = res.getHeader('Band-File-Id') ?? fileId;
          },
          onSuccess: () => resolve(),
          onError: reject,
        });
        upload.start();
      });
      expect(resumedFrom).toBe(kept);
      const stored = await download(owner.token, fileId!);
      expect(sha256(stored)).toBe(sha256(bytes));
    } finally {
      proxy.close();
    }
  });
});

/** A TCP proxy to the server that forwards only `forward` bytes of the first PATCH's connection, then holds the rest. */
async function stallingProxy(forward: number): Promise<{ url: string; close(): void }> {
  const target = new URL(server.url);
  let stalled = false;
  const proxy = net.createServer((client) => {
    const upstream = net.connect(Number(target.port), target.hostname);
    let budget = Number.POSITIVE_INFINITY;
    client.on('data', (chunk: Buffer) => {
      if (!stalled && chunk.subarray(0, 6).toString('latin1') === 'PATCH ') {
        stalled = true;
        budget = forward + chunk.indexOf('\r\n\r\n') + 4;
      }
      if (budget <= 0) return;
      upstream.write(chunk.subarray(0, budget));
      budget -= chunk.length;
    });
    upstream.on('data', (chunk) => client.write(chunk));
    for (const socket of [client, upstream]) {
      socket.on('error', () => undefined);
      socket.on('close', () => {
        client.destroy();
        upstream.destroy();
      });
    }
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(proxy.address() as net.AddressInfo).port}`, close: () => proxy.close() };
}

/** Bytes this process has read so far, from files and sockets alike (Linux). */
async function bytesRead(): Promise<number> {
  return Number(/^rchar: (\d+)$/m.exec(await readFile('/proc/self/io', 'utf8'))![1]);
}

describe('the sha256 of an upload', () => {
  it.skipIf(process.platform !== 'linux')('is taken as the bytes arrive: completing an upload in one PATCH does not read its file again', async () => {
    const bytes = sampleBytes('zip', 8 * 1024 * 1024);
    const url = await createdUrl(owner.token, owner.cutId, 'whole.zip', bytes.length);
    const before = await bytesRead();
    const response = await patch(owner.token, url, 0, bytes);
    const read = (await bytesRead()) - before;
    expect(response.status).toBe(204);
    // The body, read from its socket once; hashing the file again at completion would read it a second time.
    expect(read).toBeGreaterThanOrEqual(bytes.length);
    expect(read).toBeLessThan(bytes.length * 1.5);
    const file = await api.request('GET', `/api/files/${response.headers.get('band-file-id')}`, { token: owner.token });
    expect(file.body.sha256).toBe(sha256(bytes));
  });
});
