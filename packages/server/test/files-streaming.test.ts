import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { multipartPieces, rawUpload, sampleBytes, userWithCut } from './support/files.js';
import { client } from './support/http.js';
import { storageUnderTest, type WatchedBucket, watchedBucket } from './support/s3.js';
import { startTestServer, type TestServer } from './support/server.js';
import { until } from './support/until.js';

// Uploads sent piece by piece with node:http, to see what the server does while a body is still arriving.

const MiB = 1024 * 1024;
/** Under STORAGE=s3 a write shows in the bucket once a part (S3_PART_SIZE_MB=5 here) has arrived: uploads caught in flight send more. */
const IN_FLIGHT = 5 * MiB + 20_000;
const LIMIT = 6 * MiB;

let bucket: WatchedBucket | null = null;
let server: TestServer;
let api: ReturnType<typeof client>;
let owner: Awaited<ReturnType<typeof userWithCut>>;

beforeAll(async () => {
  bucket = storageUnderTest === 's3' ? await watchedBucket() : null;
  server = await startTestServer({
    MAX_AUDIO_BYTES: String(LIMIT),
    MAX_STEM_BYTES: String(LIMIT),
    MAX_IMAGE_BYTES: String(64 * 1024),
    ...(bucket ? { ...bucket.env, S3_PART_SIZE_MB: '5' } : {}),
  });
  api = client(server.url);
  owner = await userWithCut(api);
});
afterAll(async () => {
  await server?.close();
  await bucket?.close();
});

/** Writes under way: temporary files under tmp/ (STORAGE=fs), multipart uploads left open (s3). */
const writesUnderWay = async () => (bucket ? bucket.openMultipartUploads() : (await readdir(path.join(server.dataDir, 'tmp'))).length);
const storedFiles = () => server.stored.list('files');
const fileRows = async () => Number((await server.sql`select count(*)::int as n from files`)[0]!.n);


async function expectNoResidue(storedBefore: string[]): Promise<void> {
  await until('the write under way to go', async () => (await writesUnderWay()) === 0);
  expect(await storedFiles()).toEqual(storedBefore);
  expect(await fileRows()).toBe(0);
}

it('refuses a Content-Length over every limit before reading the body', async () => {
  const { contentType, head } = multipartPieces(owner.cutId, 'big.zip');
  const response = await rawUpload(server.url, owner.token, { 'content-type': contentType, 'content-length': 600 * 1024 * 1024 }, (request) => {
    request.write(head);
  });
  expect(response?.status).toBe(413);
  expect(JSON.parse(response!.body).code).toBe('FILE_TOO_LARGE');
  expect(await writesUnderWay()).toBe(0);
});

it('answers 413 as soon as the limit is crossed, while the client is still sending', async () => {
  const before = await storedFiles();
  const { contentType, head } = multipartPieces(owner.cutId, 'long.wav');
  const response = await rawUpload(server.url, owner.token, { 'content-type': contentType, 'transfer-encoding': 'chunked' }, (request) => {
    request.write(head);
    request.write(sampleBytes('wav', LIMIT + 1));
  });
  expect(response?.status).toBe(413);
  expect(JSON.parse(response!.body).code).toBe('FILE_TOO_LARGE');
  await expectNoResidue(before);
});

it('leaves nothing behind when the client aborts mid-file', async () => {
  const before = await storedFiles();
  const { contentType, head } = multipartPieces(owner.cutId, 'abort.wav');
  const response = await rawUpload(server.url, owner.token, { 'content-type': contentType, 'content-length': head.length + IN_FLIGHT + 30_000 }, (request) => {
    request.write(Buffer.concat([head, sampleBytes('wav', IN_FLIGHT)]));
    void until('the upload to start', async () => (await writesUnderWay()) === 1).then(() => request.destroy());
  });
  expect(response).toBeNull();
  await expectNoResidue(before);
});

it('checks access when cutId comes first: a stranger gets 404 before any byte is stored', async () => {
  const stranger = await api.register();
  const { contentType, head } = multipartPieces(owner.cutId, 'sneaky.wav');
  const response = await rawUpload(server.url, stranger.accessToken, { 'content-type': contentType, 'transfer-encoding': 'chunked' }, (request) => {
    request.write(Buffer.concat([head, sampleBytes('wav', 1000)]));
  });
  expect(response?.status).toBe(404);
  expect(await writesUnderWay()).toBe(0);
});

it('answers 404 and stores nothing when the cut is deleted while its upload streams', async () => {
  const before = await storedFiles();
  const cutId: string = (await api.request('POST', `/api/vibes/${owner.vibeId}/cuts`, { token: owner.token, json: { name: 'Doomed' } })).body.id;
  const { contentType, head, tail } = multipartPieces(cutId, 'race.wav');
  const response = await rawUpload(server.url, owner.token, { 'content-type': contentType, 'transfer-encoding': 'chunked' }, (request) => {
    request.write(Buffer.concat([head, sampleBytes('wav', IN_FLIGHT)]));
    void (async () => {
      await until('the upload to start', async () => (await writesUnderWay()) === 1);
      const deleted = await api.request('DELETE', `/api/cuts/${cutId}`, { token: owner.token });
      expect(deleted.status).toBe(200);
      request.end(Buffer.concat([Buffer.alloc(1000, 1), tail]));
    })();
  });
  expect(response?.status).toBe(404);
  expect(JSON.parse(response!.body).detail).toBe('Cut not found');
  await expectNoResidue(before);
});
