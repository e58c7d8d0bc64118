import { chmod, lstat, mkdir, readdir, unlink } from 'node:fs/promises';
import path from 'node:path';
import { inject, injectable } from 'tsyringe';
import type { Config } from './config.js';
import { BLOB_STORE, CONFIG, LOGGER } from './di.js';
import type { Logger } from './logger.js';
import type { Clock } from './clock.js';
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

/** What a delete leaves to remove on disk once its transaction has committed. */
export interface DeletedContent {
  files: DeletedFile[];
  /** Stored at key images/<name>. */
  images: string[];
}

/**
 * DATA_DIR's housekeeping, and the removal of stored objects through the BlobStore (core/store), which alone
 * reads and writes stored bytes. With STORAGE=fs they live under DATA_DIR:
 *   files/<id>.<ext>   uploaded files (the row in `files` names them)
 *   images/<name>      project and vibe images (the `image` column names them)
 *   tmp/               uploads in progress; renamed into place once complete; the purge job removes those
 *                      untouched for STRAY_AGE_MS (start-up removes nothing: instances may share DATA_DIR)
 *   resumable/<id>     the multipart uploads of resumable uploads (their id in `resumable_uploads`); they
 *                      outlive a restart, so start-up leaves them; renamed into files/ on completion
 *   orphans/files/, orphans/images/   stored bytes no row refers to, moved there by the `orphans --move`
 *                      command (never automatically); with STORAGE=s3 the keys orphans/files/<id>.<ext>, …
 * Bytes are written to tmp/ first and renamed (same file system, atomic), so a stored path never
 * holds a partial file. Only the server's user can read any of it: files 0600, directories 0700.
 */
@injectable()
export class Disk {
  readonly dataDir: string;
  readonly filesDir: string;
  readonly imagesDir: string;
  readonly previewsDir: string;
  readonly tempDir: string;
  readonly resumableDir: string;
  readonly orphansDir: string;

  constructor(
    @inject(CONFIG) private readonly config: Config,
    @inject(LOGGER) private readonly log: Logger,
    @inject(BLOB_STORE) private readonly store: BlobStore,
  ) {
    this.dataDir = config.dataDir;
    this.filesDir = path.join(config.dataDir, 'files');
    this.imagesDir = path.join(config.dataDir, 'images');
    this.previewsDir = path.join(config.dataDir, 'previews');
    this.tempDir = path.join(config.dataDir, 'tmp');
    this.resumableDir = path.join(config.dataDir, 'resumable');
    this.orphansDir = path.join(config.dataDir, 'orphans');
  }

  /**
   * Creates the directories and tightens the modes of what is already there (files 0600, directories
   * 0700), whatever the umask; runs at start-up, before the server listens.
   */
  async prepare(): Promise<void> {
    await mkdir(this.config.dataDir, { recursive: true, mode: PRIVATE_DIR });
    await chmod(this.config.dataDir, this.dataDirMode());
    for (const dir of [this.filesDir, this.imagesDir, this.previewsDir, this.tempDir, this.resumableDir, this.orphansDir, ...this.orphanDirs()]) {
      await mkdir(dir, { recursive: true, mode: PRIVATE_DIR });
      await chmod(dir, PRIVATE_DIR);
    }
    for (const dir of [this.filesDir, this.imagesDir, this.previewsDir, ...this.orphanDirs()]) {
      for (const name of await readdir(dir)) {
        const entry = path.join(dir, name);
        if ((await lstat(entry)).isFile()) await chmod(entry, PRIVATE_FILE);
      }
    }
  }

  /**
   * 0700, except where the embedded PostgreSQL runs as the `postgres` user (the server runs as root): that
   * user must traverse DATA_DIR to reach its database directory, so DATA_DIR is 0711 (no listing, no reading).
   */
  private dataDirMode(): number {
    return this.config.databaseUrl === null && process.getuid?.() === 0 ? 0o711 : PRIVATE_DIR;
  }

  /** orphans/files, orphans/images and orphans/previews: an orphan keeps the name it had, so it can be moved back. */
  private orphanDirs(): string[] {
    return [this.filesDir, this.imagesDir, this.previewsDir].map((dir) => path.join(this.orphansDir, path.basename(dir)));
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
   * Removes the local directory's temporary uploads (tmp/, where the fs driver writes before its rename)
   * untouched for `ageMs` (their server died mid-upload) and answers how many. Younger ones may be uploads in
   * flight on any instance sharing DATA_DIR.
   */
  async removeStaleTemp(ageMs: number): Promise<number> {
    let removed = 0;
    for (const file of await this.filesIn(this.tempDir, ageMs)) {
      try {
        await unlink(path.join(this.config.dataDir, file.path));
        removed++;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') this.log.error('could not remove a temporary upload', { path: file.path, error });
      }
    }
    return removed;
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

  /** The files in `dir` unchanged for `minAgeMs`, relative to DATA_DIR; none when `dir` does not exist. */
  private async filesIn(dir: string, minAgeMs: number): Promise<StoredFile[]> {
    const changedBefore = Date.now() - minAgeMs;
    const names = await readdir(dir).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return [];
      throw error;
    });
    const found: StoredFile[] = [];
    for (const name of names.sort()) {
      const info = await lstat(path.join(dir, name)).catch(() => null);
      if (info?.isFile() && info.mtimeMs <= changedBefore) found.push({ path: path.relative(this.config.dataDir, path.join(dir, name)), size: info.size });
    }
    return found;
  }
}

/** A file under DATA_DIR: its path relative to DATA_DIR, and its size. */
interface StoredFile {
  path: string;
  size: number;
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

const PRIVATE_FILE = 0o600;
const PRIVATE_DIR = 0o700;
