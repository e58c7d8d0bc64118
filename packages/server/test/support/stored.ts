import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { type Config, loadConfig } from '../../src/core/config.js';
import { FsBlobStore } from '../../src/core/store/fs-store.js';
import { createBlobStore } from '../../src/core/store/index.js';

/**
 * A server's stored bytes, read and changed through the driver it runs on (DATA_DIR/files and images/ under
 * STORAGE=fs, its bucket under s3), so a test that looks at, plants or removes stored bytes runs on both.
 * Keys are the server's own: `files/<id>.<ext>`, `images/<name>`.
 */
export interface StoredObjects {
  /** The object names under `files/` or `images/`, sorted. */
  list(kind: 'files' | 'images'): Promise<string[]>;
  /** The object's bytes; rejects (ObjectMissing) when there is none. */
  read(key: string): Promise<Buffer>;
  exists(key: string): Promise<boolean>;
  write(key: string, bytes: Buffer | string): Promise<void>;
  delete(key: string): Promise<void>;
  close(): void;
}

export async function storedObjects(config: Pick<Config, 'storage' | 'dataDir'>): Promise<StoredObjects> {
  const store = await createBlobStore(config.storage, config.dataDir);
  // Bytes may be planted before a server first starts on the DATA_DIR (an old DATA_DIR's files).
  if (store instanceof FsBlobStore) await store.prepare();
  const storage = config.storage;
  // The driver interface lists nothing (the server never needs to): the bucket is listed here.
  const s3 =
    storage.driver === 's3'
      ? new S3Client({
          region: storage.region,
          ...(storage.endpoint ? { endpoint: storage.endpoint } : {}),
          forcePathStyle: storage.forcePathStyle,
          ...(storage.credentials ? { credentials: storage.credentials } : {}),
        })
      : null;
  return {
    async list(kind) {
      if (storage.driver === 'fs') return (await readdir(path.join(config.dataDir, kind)).catch(() => [])).sort();
      const names: string[] = [];
      let token: string | undefined;
      do {
        const page = await s3!.send(new ListObjectsV2Command({ Bucket: storage.bucket, Prefix: `${storage.prefix}${kind}/`, ContinuationToken: token }));
        for (const object of page.Contents ?? []) names.push(object.Key!.slice(`${storage.prefix}${kind}/`.length));
        token = page.NextContinuationToken;
      } while (token);
      return names.sort();
    },
    read: async (key) => buffer(await store.read(key)),
    exists: async (key) => (await store.head(key)) !== null,
    async write(key, bytes) {
      await store.write(key, Readable.from([Buffer.from(bytes)]));
    },
    delete: (key) => store.delete(key),
    close() {
      s3?.destroy();
      if ('destroy' in store && typeof store.destroy === 'function') store.destroy();
    },
  };
}

/** The stored bytes a server started with these settings (a spawned process, a restored DATA_DIR) has. */
export function storedObjectsOf(env: Record<string, string>): Promise<StoredObjects> {
  return storedObjects(loadConfig(env));
}
