import { inject, injectable } from 'tsyringe';
import type { Config } from './config.js';
import { BLOB_STORE, CONFIG, LOGGER } from './di.js';
import type { Logger } from './logger.js';
import type { Clock } from './clock.js';
import { LocalDataDir } from './local-data-dir.js';
import type { Queryable } from './sql.js';
import { type BlobStore, type ListedObject, storeKeys } from './store/index.js';

/** A deleted file's stored objects: its bytes, its preview, and its STEM entries' previews (§20). */
export interface DeletedFile {
  /** Stored at key files/<id>.<extension>. */
  id: string;
  extension: string;
  /** The positions of the entries whose preview was made (previews/<id>.<position>.m4a). */
  entryPreviews: number[];
}

/**
 * What `delete from files … returning` selects for a DeletedFile. The entry rows go by the cascade, which runs
 * after the statement: its RETURNING still sees them.
 */
export const deletedFileColumns = (tx: Queryable) =>
  tx`id, extension, coalesce((select array_agg(e.position) from public.stem_entries e where e.file_id = files.id and e.preview = 'done'), '{}') as entry_previews`;

/** What a delete leaves to remove in the store once its transaction has committed. */
export interface DeletedContent {
  files: DeletedFile[];
  /** Stored at key images/<name>. */
  images: string[];
}

/**
 * The stored objects as the features see them, whichever driver holds them (a local directory, a bucket): the
 * removals after a commit (never throwing: the purge job retries what failed), and the orphans (objects no row
 * refers to) listed, moved under orphans/ and purged. Every byte goes through the BlobStore (core/store); the
 * local directory's own layout and housekeeping are LocalDataDir's.
 */
@injectable()
export class StoredObjects {
  /** DATA_DIR as the local driver lays it out (its directories also exist, empty, with STORAGE=s3). */
  readonly local: LocalDataDir;

  constructor(
    @inject(CONFIG) config: Config,
    @inject(LOGGER) private readonly log: Logger,
    @inject(BLOB_STORE) private readonly store: BlobStore,
  ) {
    this.local = new LocalDataDir(config, log);
  }

  /** Where `moveOrphans` puts the local driver's orphans: DATA_DIR/orphans (keys orphans/… in a bucket). */
  get orphansDir(): string {
    return this.local.orphansDir;
  }

  /**
   * Removes a stored object and never throws: used for cleanup after failures and for bytes whose row is
   * already gone (after commit). A failure is logged; the purge job removes what the removed_bytes ledger
   * still lists. Answers whether the removal went through (nothing to remove is no failure).
   */
  async removeQuietly(key: string): Promise<boolean> {
    try {
      await this.store.delete(key);
      return true;
    } catch (error) {
      this.log.error('could not remove a stored object', { key, error });
      return false;
    }
  }

  /** Removes a file's bytes and its previews' (§20); never throws, answers whether all went. */
  async removeFile({ id, extension, entryPreviews }: DeletedFile): Promise<boolean> {
    const removed = await Promise.all([
      this.removeQuietly(storeKeys.file(id, extension)),
      this.removeQuietly(storeKeys.preview(id)),
      ...entryPreviews.map((position) => this.removeQuietly(storeKeys.entryPreview(id, position))),
    ]);
    return removed.every(Boolean);
  }

  /** Removes the bytes of committed deletes; never throws (a failure is logged; the purge job tries again). */
  async removeDeleted(content: DeletedContent): Promise<void> {
    await Promise.all([
      ...content.files.map((file) => this.removeFile(file)),
      ...content.images.map((name) => this.removeQuietly(storeKeys.image(name))),
    ]);
  }

  /** Whether the object at `key` exists; rejects when the store cannot tell (the purge job tries again). */
  async exists(key: string): Promise<boolean> {
    return (await this.store.head(key)) !== null;
  }

  /**
   * The stored objects no row refers to, through the store's listing (DATA_DIR's directories, or the bucket under
   * S3_PREFIX): those under files/ and images/ unchanged for STRAY_AGE_MS by `clock` that `references` does not
   * name, then those already under orphans/ (any age), with their sizes. A younger object may be an upload
   * between storing and recording, on any instance: it is no orphan yet. The listing is asked about a page at a
   * time (memory does not grow with the store), each page listed before `references` is asked about it: an
   * object an upload has just completed is then on the pending_objects ledger or recorded (a resumable upload's
   * object may carry the older time its multipart upload began). `limit` stops the listing after that many
   * objects (`complete` false); `signal` ends it (rejecting with its reason).
   */
  async listOrphans(references: References, clock: Clock, { limit = Infinity, signal }: { limit?: number; signal?: AbortSignal } = {}): Promise<Orphans> {
    const changedBefore = clock.now() - STRAY_AGE_MS;
    const inPlace: ListedObject[] = [];
    let found = 0;
    let listed = 0;
    let complete = true;
    let page: ListedObject[] = [];
    const judge = async (): Promise<void> => {
      const referenced = await references.among(page.map((object) => object.key));
      found += page.filter((object) => referenced.has(object.key)).length;
      inPlace.push(...page.filter((object) => !referenced.has(object.key) && object.modifiedAt.getTime() <= changedBefore));
      page = [];
    };
    const moved: ListedObject[] = [];
    const prefixes = [
      ['files/', false],
      ['images/', false],
      ['previews/', false],
      ['orphans/files/', true],
      ['orphans/images/', true],
      ['orphans/previews/', true],
    ] as const;
    listing: for (const [prefix, movedEarlier] of prefixes) {
      for await (const object of this.store.list(prefix)) {
        signal?.throwIfAborted();
        if (listed === limit) {
          complete = false;
          break listing;
        }
        listed += 1;
        if (movedEarlier) moved.push(object);
        else {
          page.push(object);
          if (page.length === ORPHAN_PAGE) await judge();
        }
      }
    }
    await judge();
    return { inPlace, moved, referenced: { total: await references.count(), found }, complete };
  }

  /**
   * Moves orphans still in place under orphans/ with their own keys (one already taken there gets a numbered
   * suffix), so they can be moved back.
   */
  async moveOrphans(inPlace: ListedObject[], moved: ListedObject[]): Promise<void> {
    const taken = new Set(moved.map((object) => object.key));
    for (const orphan of inPlace) {
      const target = storeKeys.orphan(orphan.key);
      let free = target;
      for (let n = 1; taken.has(free); n++) free = `${target}.${n}`;
      taken.add(free);
      await this.store.move(orphan.key, free);
    }
  }

  /** Deletes orphans (in place or moved). */
  async purgeOrphans(orphans: ListedObject[]): Promise<void> {
    for (const orphan of orphans) await this.store.delete(orphan.key);
  }
}

/** What refers to stored keys: rows, and the pending_objects ledger. */
export interface References {
  /** Those of `keys` referred to. */
  among(keys: readonly string[]): Promise<ReadonlySet<string>>;
  /** How many keys are referred to. */
  count(): Promise<number>;
}

/** Listed objects asked about at once: a store's page (S3 lists 1,000 keys a page). */
const ORPHAN_PAGE = 1000;

/** Stored objects no row refers to: still under files/ and images/, or already moved under orphans/. */
export interface Orphans {
  inPlace: ListedObject[];
  moved: ListedObject[];
  /** False when the listing stopped at its limit: there may be more. */
  complete: boolean;
  /**
   * The keys rows and the pending_objects ledger refer to, and how many of them the listing holds: none of
   * several means the store is not this database's (another bucket or S3_PREFIX), where every object would look
   * orphaned.
   */
  referenced: { total: number; found: number };
}

/**
 * Bytes without a row (a temporary upload, a stored file or image nobody recorded) count as left over only once
 * unchanged for this long: until then they may be an upload in flight on any instance sharing the store.
 */
export const STRAY_AGE_MS = 24 * 60 * 60 * 1000;

