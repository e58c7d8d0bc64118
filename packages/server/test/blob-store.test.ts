import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/core/config.js';
import { type BlobReader, type BlobStore, ObjectMissing, openBlobStore } from '../src/core/store/index.js';
import { S3BlobStore } from '../src/core/store/s3-store.js';
import { s3TestEnv } from './support/s3.js';

const MiB = 1024 * 1024;
/** S3's smallest part (fauxqs refuses smaller ones, as S3 does): a multipart write of 12 MiB has three parts. */
const PART_MB = 5;

/** A body that arrives as a stream in uneven chunks, as an upload's does (no known length: never one PutObject of a buffer). */
function streamOf(bytes: Buffer, chunk = 64 * 1024 + 7): Readable {
  return Readable.from(
    (function* () {
      for (let at = 0; at < bytes.length; at += chunk) yield bytes.subarray(at, at + chunk);
    })(),
  );
}

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/** Everything an openReader gives, read into one lent buffer of an uneven size, as a download reads it. */
async function readAll(reader: BlobReader, lent = Buffer.alloc(64 * 1024 - 13)): Promise<Buffer> {
  const pieces: Buffer[] = [];
  try {
    for (let count = await reader.read(lent); count > 0; count = await reader.read(lent)) pieces.push(Buffer.from(lent.subarray(0, count)));
  } finally {
    await reader.close();
  }
  return Buffer.concat(pieces);
}

/** The same contract, run against both drivers: the local directory and an S3 bucket (fauxqs on loopback). */
describe.each(['fs', 's3'] as const)('the %s store', (driver) => {
  let store: BlobStore & { close(): void };
  let dataDir: string;

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'bandcollab-store-'));
    const env = driver === 's3' ? { ...(await s3TestEnv()), S3_PART_SIZE_MB: String(PART_MB) } : {};
    store = await openBlobStore(loadConfig({ DATA_DIR: dataDir, ...env }));
  });
  afterAll(async () => {
    store.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('stores streamed bytes exactly as sent, small and over several parts (no checksum trailer or chunk framing in them)', async () => {
    for (const size of [1, 1000, 3 * PART_MB * MiB - 123]) {
      const bytes = randomBytes(size);
      const key = `files/${randomBytes(8).toString('hex')}.wav`;
      expect(await store.write(key, streamOf(bytes))).toEqual({ key, size });
      const stored = await buffer(await store.read(key));
      expect(stored.length).toBe(size);
      expect(sha256(stored)).toBe(sha256(bytes));
      expect(await store.head(key)).toMatchObject({ size });
    }
  });

  it('reads byte ranges', async () => {
    const bytes = randomBytes(100_000);
    const key = `files/${randomBytes(8).toString('hex')}.wav`;
    await store.write(key, streamOf(bytes));
    expect(await buffer(await store.read(key, { start: 0, end: 0 }))).toEqual(bytes.subarray(0, 1));
    expect(await buffer(await store.read(key, { start: 50_000, end: 99_999 }))).toEqual(bytes.subarray(50_000));
    expect(await buffer(await store.read(key, { start: 12_345, end: 23_456 }))).toEqual(bytes.subarray(12_345, 23_457));
  });

  it('reads into lent buffers (what downloads and archives use), whole and ranged', async () => {
    const bytes = randomBytes(PART_MB * MiB + 4321);
    const key = `files/${randomBytes(8).toString('hex')}.wav`;
    await store.write(key, streamOf(bytes));
    expect(sha256(await readAll(await store.openReader(key)))).toBe(sha256(bytes));
    expect(await readAll(await store.openReader(key, { start: 0, end: 0 }))).toEqual(bytes.subarray(0, 1));
    expect(await readAll(await store.openReader(key, { start: 12_345, end: 1_234_567 }))).toEqual(bytes.subarray(12_345, 1_234_568));
    // A reader let go before its end frees what it holds, and the next read of the object is whole.
    const early = await store.openReader(key);
    expect(await early.read(Buffer.alloc(10))).toBe(10);
    await early.close();
    expect((await readAll(await store.openReader(key))).length).toBe(bytes.length);
  });

  it('asks for a late key only once the first bytes are placed', async () => {
    const bytes = randomBytes(2000);
    let asked = 0;
    const written = await store.write(() => {
      asked += 1;
      return 'images/late.png';
    }, streamOf(bytes, 100));
    expect(written).toEqual({ key: 'images/late.png', size: 2000 });
    expect(asked).toBe(1);
    expect(await buffer(await store.read('images/late.png'))).toEqual(bytes);
  });

  it("passes on the late key's refusal (an empty or mistyped file), not as the store's failure", async () => {
    const refusal = new Error('must not be empty');
    await expect(
      store.write(() => {
        throw refusal;
      }, streamOf(Buffer.alloc(0))),
    ).rejects.toBe(refusal);
  });

  it('deletes; a missing object is ObjectMissing to read, null to head, nothing to delete', async () => {
    const key = `files/${randomBytes(8).toString('hex')}.wav`;
    await store.write(key, streamOf(randomBytes(10)));
    await store.delete(key);
    expect(await store.head(key)).toBeNull();
    await expect(store.read(key)).rejects.toBeInstanceOf(ObjectMissing);
    await expect(store.openReader(key)).rejects.toBeInstanceOf(ObjectMissing);
    await expect(store.openReader(key, { start: 0, end: 4 })).rejects.toBeInstanceOf(ObjectMissing);
    await store.delete(key);
  });

  it('lists the objects under a prefix with their sizes and times, and moves one under orphans/', async () => {
    const before = Date.now() - 2000;
    const keys = ['a', 'b'].map((name) => `images/${name}-${randomBytes(8).toString('hex')}.png`);
    for (const [at, key] of keys.entries()) await store.write(key, streamOf(randomBytes(10 + at)));
    const listed = async (prefix: string) => {
      const objects = [];
      for await (const object of store.list(prefix)) objects.push(object);
      return objects;
    };
    const images = (await listed('images/')).filter((object) => keys.includes(object.key));
    expect(images.map(({ key, size }) => ({ key, size }))).toEqual([
      { key: keys[0], size: 10 },
      { key: keys[1], size: 11 },
    ]);
    for (const object of images) expect(object.modifiedAt.getTime()).toBeGreaterThan(before);

    await store.move(keys[0]!, `orphans/${keys[0]}`);
    expect(await store.head(keys[0]!)).toBeNull();
    expect((await listed('orphans/images/')).map(({ key, size }) => ({ key, size }))).toEqual([{ key: `orphans/${keys[0]}`, size: 10 }]);
    expect((await listed('images/')).map((object) => object.key)).not.toContain(keys[0]);
  });

  it('leaves no object when the body fails, before the first part or after several', async () => {
    for (const size of [1000, 2 * PART_MB * MiB + 1]) {
      const key = `files/${randomBytes(8).toString('hex')}.wav`;
      const failing = Readable.from(
        (async function* () {
          yield* streamOf(randomBytes(size));
          throw new Error('the client went away');
        })(),
      );
      await expect(store.write(key, failing)).rejects.toThrow('the client went away');
      expect(await store.head(key)).toBeNull();
    }
  });

  it('makes an object of multipart parts written one by one, all of the part size but the last', async () => {
    const key = `files/${randomBytes(8).toString('hex')}.zip`;
    const bytes = randomBytes(2 * store.partSize + 999);
    const id = await store.startMultipart(key);
    const parts = [];
    for (let n = 0; n * store.partSize < bytes.length; n++) {
      parts.push(await store.writePart(key, id, n + 1, bytes.subarray(n * store.partSize, (n + 1) * store.partSize)));
    }
    expect(await store.head(key)).toBeNull();
    await store.completeMultipart(key, id, parts);
    expect(sha256(await buffer(await store.read(key)))).toBe(sha256(bytes));
  });

  it('aborts a multipart upload: no object, and aborting again is no error', async () => {
    const key = `files/${randomBytes(8).toString('hex')}.zip`;
    const id = await store.startMultipart(key);
    await store.writePart(key, id, 1, randomBytes(store.partSize));
    await store.abortMultipart(key, id);
    await store.abortMultipart(key, id);
    expect(await store.head(key)).toBeNull();
    await expect(store.writePart(key, id, 2, randomBytes(10))).rejects.toBeInstanceOf(ObjectMissing);
  });
});

describe('an unreachable S3 store', () => {
  let closedPort: number;
  beforeAll(async () => {
    const probe = net.createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    closedPort = (probe.address() as net.AddressInfo).port;
    await new Promise((resolve) => probe.close(resolve));
  });

  const unreachable = () =>
    new S3BlobStore({
      bucket: 'gone',
      region: 'us-east-1',
      endpoint: `http://127.0.0.1:${closedPort}`,
      forcePathStyle: true,
      prefix: '',
      credentials: { accessKeyId: 'a', secretAccessKey: 'b' },
      partSizeBytes: PART_MB * MiB,
      presignedDownloads: false,
      checksums: 'when_required',
    });

  it('answers 503 UNAVAILABLE with Retry-After to reads and writes, after its retries', async () => {
    const store = unreachable();
    try {
      await expect(store.read('files/x.wav')).rejects.toMatchObject({ code: 'UNAVAILABLE', details: { retryAfterSeconds: 5 } });
      await expect(store.openReader('files/x.wav')).rejects.toMatchObject({ code: 'UNAVAILABLE', details: { retryAfterSeconds: 5 } });
      await expect(store.write('files/x.wav', streamOf(randomBytes(10)))).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    } finally {
      store.destroy();
    }
  });

  it('refuses to start with one line naming the bucket', async () => {
    const config = loadConfig({
      STORAGE: 's3',
      S3_BUCKET: 'gone',
      S3_ENDPOINT: `http://127.0.0.1:${closedPort}`,
      S3_FORCE_PATH_STYLE: 'true',
      S3_ACCESS_KEY_ID: 'a',
      S3_SECRET_ACCESS_KEY: 'b',
    });
    await expect(openBlobStore(config)).rejects.toThrow(/^the S3 bucket gone cannot be reached \(.*\)$/);
  });
});

describe('an S3 store that fails a read', () => {
  // A stand-in for the store's failures that fauxqs does not make: each GET is answered by `answer`.
  let answer: (req: http.IncomingMessage, res: http.ServerResponse) => void = () => undefined;
  let gets = 0;
  let endpoint: string;
  const failing = http.createServer((req, res) => {
    gets += 1;
    answer(req, res);
  });
  beforeAll(async () => {
    await new Promise<void>((resolve) => failing.listen(0, '127.0.0.1', resolve));
    endpoint = `http://127.0.0.1:${(failing.address() as net.AddressInfo).port}`;
  });
  afterAll(async () => {
    failing.closeAllConnections();
    await new Promise((resolve) => failing.close(resolve));
  });
  const storeAt = () =>
    new S3BlobStore({
      bucket: 'b',
      region: 'us-east-1',
      endpoint,
      forcePathStyle: true,
      prefix: '',
      credentials: { accessKeyId: 'a', secretAccessKey: 'b' },
      partSizeBytes: PART_MB * MiB,
      presignedDownloads: false,
      checksums: 'when_required',
    });
  const s3Error = (res: http.ServerResponse, status: number, code: string) =>
    res.writeHead(status, { 'content-type': 'application/xml' }).end(`<?xml version="1.0"?><Error><Code>${code}</Code><Message>${code} here</Message></Error>`);

  it('answers 503 UNAVAILABLE after three tries of a store answering 503 SlowDown', async () => {
    const store = storeAt();
    try {
      gets = 0;
      answer = (_req, res) => s3Error(res, 503, 'SlowDown');
      await expect(store.openReader('files/x.wav')).rejects.toMatchObject({ code: 'UNAVAILABLE' });
      expect(gets).toBe(3);
    } finally {
      store.destroy();
    }
  });

  it("passes on the store's other refusals by their code (403 AccessDenied), untried again", async () => {
    const store = storeAt();
    try {
      gets = 0;
      answer = (_req, res) => s3Error(res, 403, 'AccessDenied');
      await expect(store.openReader('files/x.wav')).rejects.toMatchObject({ name: 'AccessDenied', $metadata: { httpStatusCode: 403 } });
      expect(gets).toBe(1);
    } finally {
      store.destroy();
    }
  });

  it('fails the read, not hangs, when the store goes away in the middle of the body; asks for the range it was given', async () => {
    const store = storeAt();
    try {
      let range: string | undefined;
      answer = (req, res) => {
        range = req.headers.range;
        res.writeHead(206, { 'content-length': '1000000' });
        res.write(Buffer.alloc(1000));
        setTimeout(() => res.destroy(), 20);
      };
      const reader = await store.openReader('files/x.wav', { start: 5, end: 1_000_004 });
      expect(range).toBe('bytes=5-1000004');
      await expect(readAll(reader)).rejects.toThrow();
    } finally {
      store.destroy();
    }
  });
});

describe('the storage settings', () => {
  it.each([
    [{ STORAGE: 'nfs' }, 'STORAGE must be fs or s3'],
    [{ STORAGE: 's3' }, 'S3_BUCKET is required with STORAGE=s3'],
    [{ STORAGE: 's3', S3_BUCKET: 'b', S3_PART_SIZE_MB: '4' }, 'S3_PART_SIZE_MB must be a whole number from 5'],
    [{ STORAGE: 's3', S3_BUCKET: 'b', S3_CHECKSUMS: 'always' }, 'S3_CHECKSUMS must be when_required or when_supported'],
    [{ STORAGE: 's3', S3_BUCKET: 'b', S3_ACCESS_KEY_ID: 'a' }, 'S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY go together'],
  ])('refuses %o', (env, problem) => {
    expect(() => loadConfig(env)).toThrow(problem);
  });

  it('defaults to the local directory, and to part size 8 MiB and when_required checksums on S3', () => {
    expect(loadConfig({}).storage).toEqual({ driver: 'fs' });
    expect(loadConfig({ STORAGE: 's3', S3_BUCKET: 'b' }).storage).toMatchObject({ partSizeBytes: 8 * MiB, checksums: 'when_required', region: 'us-east-1' });
  });
});

