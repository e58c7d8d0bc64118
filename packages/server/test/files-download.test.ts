import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openEventSocket } from './support/event-socket.js';
import { sampleBytes, upload, userWithCut } from './support/files.js';
import { client } from './support/http.js';
import { startTestServer, type TestServer } from './support/server.js';

let server: TestServer;
let api: ReturnType<typeof client>;
let owner: Awaited<ReturnType<typeof userWithCut>>;
let file: { id: string; url: string; sha256: string; size: number };
const bytes = sampleBytes('wav', 1000);

beforeAll(async () => {
  server = await startTestServer();
  api = client(server.url);
  owner = await userWithCut(api);
  file = (await upload(api, owner.token, owner.cutId, 'mix.wav', bytes, 'Final mix')).body;
});
afterAll(() => server?.close());

const download = (headers: Record<string, string> = {}, method = 'GET', target = `/api/files/${file.id}/download`) =>
  api.request(method, target, { token: owner.token, headers });

describe('download', () => {
  it('sends the bytes with the headers of the API', async () => {
    const response = await download();
    expect(response.status).toBe(200);
    expect(Buffer.from(response.text, 'latin1').length).toBeGreaterThan(0);
    const h = response.headers;
    expect(h.get('content-type')).toBe('audio/wav');
    expect(h.get('content-length')).toBe('1000');
    expect(h.get('content-disposition')).toBe(`attachment; filename="Final mix.wav"; filename*=UTF-8''Final%20mix.wav`);
    expect(h.get('etag')).toBe(`"${file.sha256}"`);
    expect(new Date(h.get('last-modified')!).getTime()).toBeGreaterThan(Date.now() - 60_000);
    expect(h.get('accept-ranges')).toBe('bytes');
    expect(h.get('x-content-type-options')).toBe('nosniff');
    expect(h.get('content-security-policy')).toBe("default-src 'none'; sandbox");
    const raw = Buffer.from(await (await fetch(`${server.url}/api/files/${file.id}/download`, { headers: { authorization: `Bearer ${owner.token}` } })).arrayBuffer());
    expect(raw).toEqual(bytes);
  });

  it('names non-ASCII files with an ASCII filename and an RFC 5987 filename*', async () => {
    const named = async (name: string) => {
      const uploaded = (await upload(api, owner.token, owner.cutId, 'x.mp3', sampleBytes('mp3', 20), name)).body;
      return (await api.request('HEAD', `/api/files/${uploaded.id}/download`, { token: owner.token })).headers.get('content-disposition')!;
    };
    const unicode = await named('Grüße – 夜 (take 1)');
    expect(unicode).toBe(`attachment; filename="Gr__e _ _ (take 1).mp3"; filename*=UTF-8''Gr%C3%BC%C3%9Fe%20%E2%80%93%20%E5%A4%9C%20%28take%201%29.mp3`);
    expect(decodeURIComponent(unicode.split("UTF-8''")[1]!)).toBe('Grüße – 夜 (take 1).mp3');
    expect(await named('say "hi" \\ 100%.MP3')).toBe(`attachment; filename="say _hi_ _ 100_.MP3"; filename*=UTF-8''say%20%22hi%22%20%5C%20100%25.MP3`);
    // Separators and quotes of the header itself stay inside the quoted or encoded value.
    expect(await named("a;b=c, d's *x*.mp3")).toBe(`attachment; filename="a;b=c, d's *x*.mp3"; filename*=UTF-8''a%3Bb%3Dc%2C%20d%27s%20%2Ax%2A.mp3`);
    // An astral character (an emoji: a surrogate pair in JavaScript) is one UTF-8 sequence, and one "_" for old clients.
    const emoji = await named('🎸 riff.mp3');
    expect(emoji).toBe(`attachment; filename="_ riff.mp3"; filename*=UTF-8''%F0%9F%8E%B8%20riff.mp3`);
  });

  it('answers HEAD with the headers and no body', async () => {
    const response = await download({}, 'HEAD');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-length')).toBe('1000');
    expect(response.text).toBe('');
  });

  it('answers If-None-Match with 304 and no body', async () => {
    for (const tag of [`"${file.sha256}"`, `W/"${file.sha256}"`, `"other", "${file.sha256}"`, '*']) {
      const response = await download({ 'if-none-match': tag });
      expect(response.status).toBe(304);
      expect(response.text).toBe('');
      expect(response.headers.get('etag')).toBe(`"${file.sha256}"`);
    }
    expect((await download({ 'if-none-match': '"other"' })).status).toBe(200);
  });

  it('answers If-Modified-Since with 304 unless the file changed after it or If-None-Match says otherwise', async () => {
    const lastModified = new Date((await download({}, 'HEAD')).headers.get('last-modified')!);
    const at = (seconds: number) => new Date(lastModified.getTime() + seconds * 1000).toUTCString();
    const notModified = await download({ 'if-modified-since': at(0) });
    expect(notModified.status).toBe(304);
    expect(notModified.text).toBe('');
    expect((await download({ 'if-modified-since': at(60) }, 'HEAD')).status).toBe(304);
    expect((await download({ 'if-modified-since': at(-1) })).status).toBe(200);
    expect((await download({ 'if-modified-since': 'not a date' })).status).toBe(200);
    // If-None-Match decides when both are sent (RFC 9110 §13.2.2), as browsers do.
    expect((await download({ 'if-none-match': '"other"', 'if-modified-since': at(0) })).status).toBe(200);
    expect((await download({ 'if-none-match': `"${file.sha256}"`, 'if-modified-since': at(-1) })).status).toBe(304);
  });

  it('answers 304 to a revalidation that also says Cache-Control: no-cache, as fetch() sends every one', async () => {
    const response = await download({ 'if-none-match': `"${file.sha256}"`, 'cache-control': 'no-cache' });
    expect(response.status).toBe(304);
  });

  it('answers 304 before looking at the Range', async () => {
    expect((await download({ 'if-none-match': `"${file.sha256}"`, range: 'bytes=0-9' })).status).toBe(304);
  });

  it.each([
    ['bytes=0-9', 0, 9],
    ['bytes=990-', 990, 999],
    ['bytes=-10', 990, 999],
    ['bytes=-5000', 0, 999],
    ['bytes=500-5000', 500, 999],
    ['bytes=999-999', 999, 999],
    ['bytes=0-0', 0, 0],
  ])('answers Range %s with 206 and bytes %i-%i', async (range, start, end) => {
    const response = await fetch(`${server.url}/api/files/${file.id}/download`, { headers: { authorization: `Bearer ${owner.token}`, range } });
    expect(response.status).toBe(206);
    expect(response.headers.get('content-range')).toBe(`bytes ${start}-${end}/1000`);
    expect(response.headers.get('content-length')).toBe(String(end - start + 1));
    expect(Buffer.from(await response.arrayBuffer())).toEqual(bytes.subarray(start, end + 1));
  });

  it.each([
    ['bytes=0-5,3-9', 0, 9],
    ['bytes=0-9,5000-6000', 0, 9],
    ['bytes=0-4, 5-9', 0, 9],
    ['Bytes=0-9', 0, 9],
  ])('merges overlapping or adjacent ranges and drops ranges past the end: Range %s is 206 with bytes %i-%i', async (range, start, end) => {
    const response = await download({ range });
    expect(response.status).toBe(206);
    expect(response.headers.get('content-range')).toBe(`bytes ${start}-${end}/1000`);
    expect(Buffer.from(response.text, 'latin1')).toEqual(bytes.subarray(start, end + 1));
  });

  it.each(['bytes=1000-', 'bytes=5000-6000', 'bytes=-0', 'bytes=9-2', 'bytes=1000-,9-2'])('answers the unsatisfiable Range %s with 416', async (range) => {
    const response = await download({ range });
    expect(response.status).toBe(416);
    expect(response.headers.get('content-range')).toBe('bytes */1000');
    // Problem details: VALIDATION_FAILED always names its fields.
    expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(response.body).toMatchObject({ status: 416, code: 'VALIDATION_FAILED', errors: [{ field: 'Range' }] });
  });

  it.each(['bytes=0-1,5-6', 'bytes=0-0,-1', 'items=0-5', 'bytes=abc', 'bytes=-', 'bytes=1e2-'])('ignores the Range %s it does not serve: 200 with everything', async (range) => {
    const response = await download({ range });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-length')).toBe('1000');
  });

  it('honours If-Range only while it names the current version', async () => {
    expect((await download({ range: 'bytes=0-9', 'if-range': `"${file.sha256}"` })).status).toBe(206);
    expect((await download({ range: 'bytes=0-9', 'if-range': '"stale"' })).status).toBe(200);
  });

  it('answers HEAD with a Range as 206 without a body', async () => {
    const response = await download({ range: 'bytes=10-19' }, 'HEAD');
    expect(response.status).toBe(206);
    expect(response.headers.get('content-length')).toBe('10');
    expect(response.text).toBe('');
  });

  it('answers 404 when the bytes are gone from the store', async () => {
    const lost = (await upload(api, owner.token, owner.cutId, 'lost.mp3', sampleBytes('mp3', 20))).body;
    await server.stored.delete(`files/${lost.id}.mp3`);
    const response = await api.request('GET', `/api/files/${lost.id}/download`, { token: owner.token });
    expect(response.status).toBe(404);
    expect(response.body.code).toBe('NOT_FOUND');
  });
});

describe('download of a file larger than one read', () => {
  // Random bytes, of a size no read or buffer size divides: a chunk sent twice, skipped or out of order shows.
  const large = Buffer.concat([sampleBytes('wav', 64), randomBytes(1_200_001 - 64)]);
  let largeFile: { id: string };
  beforeAll(async () => {
    largeFile = (await upload(api, owner.token, owner.cutId, 'long take.wav', large)).body;
  });
  const fetchLarge = (headers: Record<string, string> = {}) =>
    fetch(`${server.url}/api/files/${largeFile.id}/download`, { headers: { authorization: `Bearer ${owner.token}`, ...headers } });

  it('sends every byte in order, whole and in a range across reads', async () => {
    const whole = await fetchLarge();
    expect(Buffer.from(await whole.arrayBuffer()).equals(large)).toBe(true);
    const range = await fetchLarge({ range: 'bytes=65000-200000' });
    expect(range.status).toBe(206);
    expect(Buffer.from(await range.arrayBuffer()).equals(large.subarray(65000, 200001))).toBe(true);
  });

  it('keeps serving after a client stops reading midway', async () => {
    const url = new URL(`${server.url}/api/files/${largeFile.id}/download`);
    await new Promise<void>((resolve, reject) => {
      const req = request(url, { headers: { authorization: `Bearer ${owner.token}` } }, (res) => {
        res.once('data', () => {
          req.destroy();
          resolve();
        });
      });
      req.on('error', (error) => (req.destroyed ? undefined : reject(error)));
      req.end();
    });
    const again = await fetchLarge();
    expect(Buffer.from(await again.arrayBuffer()).equals(large)).toBe(true);
  });
});

describe('media path', () => {
  it('serves the file inline at its url, to members, by bearer token or the access_token cookie', async () => {
    const byToken = await api.request('GET', file.url, { token: owner.token });
    expect(byToken.status).toBe(200);
    expect(byToken.headers.get('content-disposition')).toMatch(/^inline; filename="Final mix.wav"/);
    expect(byToken.headers.get('content-security-policy')).toBe("default-src 'none'; sandbox");
    const byCookie = await api.request('GET', file.url, { headers: { cookie: `access_token=${owner.token}`, range: 'bytes=0-3' } });
    expect(byCookie.status).toBe(206);
    expect(byCookie.text).toBe('RIFF');
    const downloadByCookie = await api.request('HEAD', `/api/files/${file.id}/download`, { headers: { cookie: `access_token=${owner.token}` } });
    expect(downloadByCookie.status).toBe(200);
  });

  it('keeps the cookie away from the JSON endpoints', async () => {
    const response = await api.request('GET', `/api/files/${file.id}`, { headers: { cookie: `access_token=${owner.token}` } });
    expect(response.status).toBe(401);
  });

  it('answers 404 for another extension, unknown ids and names that are no stored name', async () => {
    for (const target of [
      `/uploads/files/${file.id}.mp3`,
      `/uploads/files/${file.id}`,
      '/uploads/files/00000000-0000-4000-8000-000000000000.wav',
      '/uploads/files/..%2F..%2Fetc%2Fpasswd',
      `/uploads/files/${file.id.toUpperCase()}.WAV`,
    ]) {
      expect((await api.request('GET', target, { token: owner.token })).status, target).toBe(404);
    }
  });

  it('hides files from non-members and asks strangers to authenticate', async () => {
    const stranger = await api.register();
    expect((await api.request('GET', file.url, { token: stranger.accessToken })).status).toBe(404);
    expect((await api.request('GET', file.url)).status).toBe(401);
  });
});

describe('events', () => {
  it('publishes file.uploaded and, deleted, file.trashed to the project', async () => {
    const socket = await openEventSocket(server.url, { token: owner.token });
    try {
      const uploaded = (await upload(api, owner.token, owner.cutId, 'e.ogg', sampleBytes('ogg', 40))).body;
      const created = await socket.waitFor((event) => event.type === 'file.uploaded');
      expect(created).toMatchObject({ projectId: owner.projectId, actor: { id: owner.user.user.id }, data: { file: uploaded } });
      await api.request('DELETE', `/api/files/${uploaded.id}`, { token: owner.token });
      const deleted = await socket.waitFor((event) => event.type === 'file.trashed');
      expect(deleted.data).toEqual({ fileId: uploaded.id, cutId: owner.cutId, trashedUntil: expect.any(String) });
    } finally {
      socket.close();
    }
  });
});
