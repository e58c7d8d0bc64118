import path from 'node:path';
import { type BlobStore, ObjectMissing, sha256Of } from '../core/store/index.js';
import type { Snapshot } from './repository.js';

/** An object a backup of a server on S3 lists instead of copying it: the bucket keeps it. */
export interface BucketObject {
  key: string;
  size: number;
  sha256: string;
}

/** `files/<name>`, `images/<name>` or `previews/<name>`: the only keys a manifest may list. */
const OBJECT_KEY = /^(files|images|previews)\/[^/\\]+$/;

/**
 * The objects a snapshot's rows refer to, each with its size (which also proves it is there; rejects with
 * ObjectMissing when one was deleted after the snapshot) and the sha256 the rows record. An image stored
 * before its hash was recorded is hashed from the bucket, as are the previews.
 */
export async function bucketObjects(store: BlobStore, snapshot: Snapshot): Promise<BucketObject[]> {
  const keys = [...snapshot.files.map((name) => `files/${name}`), ...snapshot.images.map((name) => `images/${path.basename(name)}`)];
  const objects: BucketObject[] = [];
  for (const key of keys) {
    const found = await store.head(key);
    if (!found) throw new ObjectMissing(key);
    objects.push({ key, size: found.size, sha256: snapshot.sha256.get(key) ?? (await sha256Of(store, key)) });
  }
  // A preview missing from the bucket is left out, not a reason to take the snapshot again: restore has it made
  // again. Its sha256 is not recorded: the bucket's bytes are hashed.
  for (const key of snapshot.previews) {
    const found = await store.head(key);
    if (!found) continue;
    try {
      objects.push({ key, size: found.size, sha256: await sha256Of(store, key) });
    } catch (error) {
      if (!(error instanceof ObjectMissing)) throw error;
    }
  }
  return objects;
}

/** The listed objects the bucket does not hold at their listed size; throws on a listing that is not one. */
export async function missingBucketObjects(store: BlobStore, objects: unknown): Promise<string[]> {
  if (!Array.isArray(objects)) throw new TypeError('objects is not a list');
  const missing: string[] = [];
  for (const object of objects as Partial<BucketObject>[]) {
    if (typeof object.key !== 'string' || !OBJECT_KEY.test(object.key) || typeof object.size !== 'number') throw new TypeError(`${JSON.stringify(object)} is not an object of a bucket`);
    if ((await store.head(object.key))?.size !== object.size) missing.push(object.key);
  }
  return missing;
}
