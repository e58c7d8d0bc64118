import { createHash } from 'node:crypto';
import { pipeline } from 'node:stream/promises';
import type { Readable } from 'node:stream';
import type { Config } from '../config.js';
import { type BlobStore, type ByteRange, ObjectMissing } from './blob-store.js';
import { FsBlobStore } from './fs-store.js';

export { type BlobReader, type BlobStore, type ByteRange, type DownloadHeaders, type ListedObject, ObjectMissing, storeKeys, storeUnavailable, type UploadedPart } from './blob-store.js';

/** Stored bytes to read in pieces (analysis reads an M4A's boxes and a ZIP's central directory). */
export interface ObjectSource {
  size: number;
  /** Bytes `start`–`end` (both included), or all of them; rejects with ObjectMissing when they are gone. */
  read(range?: ByteRange): Promise<Readable>;
}

/** The object at `key` as a source of ranges; rejects with ObjectMissing when there is none. */
export async function objectSource(store: BlobStore, key: string): Promise<ObjectSource> {
  const found = await store.head(key);
  if (!found) throw new ObjectMissing(key);
  return { size: found.size, read: (range) => store.read(key, range) };
}

/** The driver `storage` names, without checks: for a worker thread of a server that made them (analysis). */
export async function createBlobStore(storage: Config['storage'], dataDir: string): Promise<BlobStore> {
  if (storage.driver === 'fs') return new FsBlobStore(dataDir);
  const { S3BlobStore } = await import('./s3-store.js');
  return new S3BlobStore(storage);
}

/**
 * The driver STORAGE names. With `s3` the bucket is checked before the server listens: an unreachable one
 * rejects with one line. The AWS SDK is loaded only for `s3`.
 */
export async function openBlobStore(config: Config): Promise<BlobStore & { close(): void }> {
  if (config.storage.driver === 'fs') {
    const store = new FsBlobStore(config.dataDir);
    await store.prepare();
    return Object.assign(store, { close: () => undefined });
  }
  const { S3BlobStore } = await import('./s3-store.js');
  const store = new S3BlobStore(config.storage);
  try {
    await store.verify();
  } catch (error) {
    store.destroy();
    throw error;
  }
  return Object.assign(store, { close: () => store.destroy() });
}

/** The hex sha256 of a stored object's bytes, read as a stream. */
export async function sha256Of(store: BlobStore, key: string): Promise<string> {
  const hash = createHash('sha256');
  await pipeline(await store.read(key), hash);
  return hash.digest('hex');
}
