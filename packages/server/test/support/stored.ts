import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
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
  return {
    async list(kind) {
      const names: string[] = [];
      for await (const object of store.list(`${kind}/`)) names.push(object.key.slice(`${kind}/`.length));
      return names.sort();
    },
    read: async (key) => buffer(await store.read(key)),
    exists: async (key) => (await store.head(key)) !== null,
    async write(key, bytes) {
      await store.write(key, Readable.from([Buffer.from(bytes)]));
    },
    delete: (key) => store.delete(key),
    close() {
      if ('destroy' in store && typeof store.destroy === 'function') store.destroy();
    },
  };
}

/** The stored bytes a server started with these settings (a spawned process, a restored DATA_DIR) has. */
export function storedObjectsOf(env: Record<string, string>): Promise<StoredObjects> {
  return storedObjects(loadConfig(env));
}
