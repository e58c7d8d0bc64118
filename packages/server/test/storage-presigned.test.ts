import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sampleBytes, upload, userWithCut } from './support/files.js';
import { call, client } from './support/http.js';
import { s3TestEnv } from './support/s3.js';
import { startTestServer, type TestServer } from './support/server.js';

// S3_PRESIGNED_DOWNLOADS=true on fauxqs: the server checks and counts each request for a stored file's bytes,
// then answers 302 to a presigned GET. fauxqs neither checks signatures nor applies the response-* overrides
// (AWS, R2, B2 and MinIO do), so the headers the store will send are read from the signed URL's parameters
// and compared with those the server sends itself for HEAD.
let server: TestServer;
let owner: Awaited<ReturnType<typeof userWithCut>>;
let bytes: Buffer;
let fileId: string;

beforeAll(async () => {
  server = await startTestServer({ ...(await s3TestEnv()), S3_PRESIGNED_DOWNLOADS: 'true' });
  owner = await userWithCut(client(server.url));
  bytes = sampleBytes('wav', 200_000);
  const uploaded = await upload(client(server.url), owner.token, owner.cutId, 'Take «one».wav', bytes);
  expect(uploaded.status).toBe(201);
  fileId = uploaded.body.id;
});
afterAll(() => server?.close());

/** A GET not followed; then its Location followed without the server's credentials, and the same path's HEAD (whole). */
async function redirected(path: string, headers: Record<string, string> = {}) {
  const answer = await fetch(`${server.url}${path}`, { headers, redirect: 'manual' });
  expect(answer.status).toBe(302);
  expect(answer.headers.get('cache-control')).toBe('private, no-store');
  const location = new URL(answer.headers.get('location')!);
  const { range, ...credentials } = headers;
  const head = await fetch(`${server.url}${path}`, { method: 'HEAD', headers: credentials });
  expect(head.status).toBe(200);
  const followed = await fetch(location, { headers: range ? { range } : {} });
  return { location, head, followed, bytes: Buffer.from(await followed.arrayBuffer()) };
}

function expectSigned(location: URL, head: Response) {
  expect(Number(location.searchParams.get('X-Amz-Expires'))).toBeGreaterThan(0);
  expect(Number(location.searchParams.get('X-Amz-Expires'))).toBeLessThanOrEqual(300);
  expect(location.searchParams.get('X-Amz-Signature')).toMatch(/^[0-9a-f]{64}$/);
  expect(location.searchParams.get('response-content-type')).toBe(head.headers.get('content-type'));
  expect(location.searchParams.get('response-content-disposition')).toBe(head.headers.get('content-disposition'));
}

describe('S3_PRESIGNED_DOWNLOADS=true', () => {
  it('answers a download 302 to a presigned GET of the same bytes and headers, ranges included', async () => {
    const auth = { authorization: `Bearer ${owner.token}` };
    const whole = await redirected(`/api/files/${fileId}/download`, auth);
    expectSigned(whole.location, whole.head);
    expect(whole.head.headers.get('content-disposition')).toMatch(/^attachment; /);
    expect(whole.followed.status).toBe(200);
    expect(whole.bytes).toEqual(bytes);

    const ranged = await redirected(`/api/files/${fileId}/download`, { ...auth, range: 'bytes=1000-1999' });
    expect(ranged.followed.status).toBe(206);
    expect(ranged.bytes).toEqual(bytes.subarray(1000, 2000));
  });

  it('sends a media path (inline) itself, with nosniff and the sandbox a presigned answer could not carry, and still refuses one without access', async () => {
    const media = await fetch(`${server.url}/uploads/files/${fileId}.wav`, { headers: { authorization: `Bearer ${owner.token}` }, redirect: 'manual' });
    expect(media.status).toBe(200);
    expect(media.headers.get('content-disposition')).toMatch(/^inline; /);
    expect(media.headers.get('x-content-type-options')).toBe('nosniff');
    expect(media.headers.get('content-security-policy')).toContain('sandbox');
    expect(Buffer.from(await media.arrayBuffer())).toEqual(bytes);

    const stranger = await client(server.url).register();
    const refused = await fetch(`${server.url}/uploads/files/${fileId}.wav`, { headers: { authorization: `Bearer ${stranger.accessToken}` }, redirect: 'manual' });
    expect(refused.status).toBe(404);
  });

  it('redirects a file link and a cut link\'s file after counting the access; a cut link\'s ZIP and peaks are the server\'s', async () => {
    const api = client(server.url);
    const fileLink = (await api.request('POST', `/api/files/${fileId}/share`, { token: owner.token, json: {} })).body.token as string;
    const cutLink = (await api.request('POST', `/api/cuts/${owner.cutId}/share`, { token: owner.token, json: {} })).body.token as string;

    const shared = await redirected(`/api/share/${fileLink}?download=1`);
    expectSigned(shared.location, shared.head);
    expect(shared.bytes).toEqual(bytes);
    const fromCut = await redirected(`/api/share/${cutLink}/files/${fileId}?download=1`);
    expectSigned(fromCut.location, fromCut.head);
    expect(fromCut.bytes).toEqual(bytes);

    const counts = await server.sql`select access_count from share_links where file_id = ${fileId} or cut_id = ${owner.cutId} order by file_id nulls last`;
    // Each link once: its redirected GET (a HEAD is no access).
    expect(counts.map((row) => Number(row.access_count))).toEqual([1, 1]);

    const archive = await fetch(`${server.url}/api/share/${cutLink}`, { redirect: 'manual' });
    expect(archive.status).toBe(200);
    expect(archive.headers.get('content-type')).toBe('application/zip');
    await archive.arrayBuffer();
    expect((await call(server.url, 'GET', `/api/share/${fileLink}/peaks`)).status).not.toBe(302);
  });
});
