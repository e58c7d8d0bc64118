import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, type Stats } from 'node:fs';
import { lstat, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { type Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { inject, injectable } from 'tsyringe';
import { BLOB_STORE } from '../core/di.js';
import { StoredObjects } from '../core/stored-objects.js';
import { type BlobStore, ObjectMissing } from '../core/store/index.js';
import { type BucketObject, bucketObjects, missingBucketObjects } from './bucket-objects.js';
import { BackupRepository, type TableRows } from './repository.js';

/**
 * A backup directory:
 *   database/NN-<table>.copy   each table's rows (PostgreSQL COPY text format), parents first
 *   files/<id>.<ext>, images/<name>, previews/<id>.m4a, previews/<id>.<entry>.m4a
 *                              the stored objects the rows refer to, under their keys (none with STORAGE=s3:
 *                              the bucket keeps them, and the manifest lists them as `objects`)
 *   manifest.json              written last: the migrations applied, each table's columns and row count, and
 *                              the size and sha256 of every file above. A directory without it is incomplete.
 */
export interface Manifest {
  format: typeof FORMAT;
  createdAt: string;
  migrations: string[];
  tables: (TableRows & StoredFile)[];
  files: StoredFile[];
  /** A server on S3 lists its objects here instead of copying them into `files` (which stays empty). */
  objects?: BucketObject[];
}

export interface StoredFile {
  /** Relative to the backup directory, with `/`. */
  path: string;
  size: number;
  sha256: string;
}

const FORMAT = 1;
const MANIFEST = 'manifest.json';
/** A stored file deleted between the snapshot and its copy means taking the snapshot again; a few times at most. */
const ATTEMPTS = 5;

/** A refusal or a failed check, said in one sentence for the person running the command. */
export class BackupError extends Error {}

@injectable()
export class BackupService {
  constructor(
    @inject(BackupRepository) private readonly repository: BackupRepository,
    @inject(StoredObjects) private readonly objects: StoredObjects,
    @inject(BLOB_STORE) private readonly store: BlobStore,
  ) {}

  /**
   * The previews made (§20), copied like the files; one missing from the store is left out rather than failing
   * the backup (restore has it made again from its file, which is what a preview is).
   */
  private async copyPreviews(keys: string[], dir: string): Promise<StoredFile[]> {
    const copied: StoredFile[] = [];
    if (keys.length > 0) await mkdir(path.join(dir, 'previews'), { mode: 0o700 });
    for (const key of keys) {
      try {
        copied.push(await copyHashed(await this.store.read(key), path.join(dir, key), key));
      } catch (error) {
        if (!isMissing(error)) throw error;
        await rm(path.join(dir, key), { force: true });
      }
    }
    return copied;
  }

  /** Copies stored objects (keys `<kind>/<name>`) into the backup directory, hashing them on the way. */
  private async copyStored(names: string[], dir: string, kind: 'files' | 'images'): Promise<StoredFile[]> {
    const copied: StoredFile[] = [];
    if (names.length > 0) await mkdir(path.join(dir, kind), { mode: 0o700 });
    for (const name of names) {
      const key = `${kind}/${path.basename(name)}`;
      copied.push(await copyHashed(await this.store.read(key), path.join(dir, key), key));
    }
    return copied;
  }

  /**
   * Dumps the database in one snapshot, then copies the stored files its rows refer to (files stored after
   * the snapshot, or whose rows are not committed yet, are not copied). A file deleted after the snapshot
   * can no longer be copied: the backup then starts again from a new snapshot.
   */
  async backup(dir: string): Promise<Manifest> {
    await assertEmptyDirectory(dir, 'the backup directory');
    for (let attempt = 1; ; attempt += 1) {
      await mkdir(path.join(dir, 'database'), { recursive: true, mode: 0o700 });
      const tables: Manifest['tables'] = [];
      const snapshot = await this.repository.dump(async (table, rows) => {
        const file = `database/${String(tables.length + 1).padStart(2, '0')}-${table.name}.copy`;
        tables.push({ ...table, ...(await copyHashed(rows, path.join(dir, file), file)) });
      });
      try {
        const stored =
          this.store.kind === 's3'
            ? { files: [], objects: await bucketObjects(this.store, snapshot) }
            : {
                files: [
                  ...(await this.copyStored(snapshot.files, dir, 'files')),
                  ...(await this.copyStored(snapshot.images, dir, 'images')),
                  ...(await this.copyPreviews(snapshot.previews, dir)),
                ],
              };
        const manifest: Manifest = { format: FORMAT, createdAt: new Date().toISOString(), migrations: snapshot.migrations, tables, ...stored };
        await writeFile(path.join(dir, MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`, { mode: 0o600 });
        return manifest;
      } catch (error) {
        if (!isMissing(error) || attempt === ATTEMPTS) throw error;
        for (const entry of await readdir(dir)) await rm(path.join(dir, entry), { recursive: true, force: true });
      }
    }
  }

  /** A backup of a server on S3 restores only onto that bucket, which must still hold every object it lists. */
  private async checkBucket(dir: string, objects: unknown): Promise<void> {
    if (this.store.kind !== 's3') {
      throw new BackupError('the backup lists objects in a bucket (a server with STORAGE=s3 made it): restore it with STORAGE=s3 and the S3_* settings of that bucket');
    }
    let missing: string[];
    try {
      missing = await missingBucketObjects(this.store, objects);
    } catch (error) {
      if (!(error instanceof TypeError)) throw error;
      throw new BackupError(`${dir}: the manifest's objects are not a listing of a bucket (${error.message})`);
    }
    if (missing.length > 0) {
      throw new BackupError(`${missing.length} object(s) the backup lists are not in the bucket: ${missing.slice(0, 10).join(', ')}${missing.length > 10 ? ', …' : ''}`);
    }
  }

  /**
   * Restores onto an empty database (migrations applied, no rows) and an empty store (empty stored-file
   * directories, a bucket without any of the backup's keys): the files first, each checked against its
   * sha256 as it is copied, then every table in one transaction.
   * On any failure the files copied are removed again, so the command can be run once more.
   */
  async restore(dir: string, manifest: Manifest): Promise<{ previewsRemade: number }> {
    const applied = await this.repository.appliedMigrations();
    if (applied.join() !== manifest.migrations.join()) {
      throw new BackupError(
        `the backup was made with migrations ${manifest.migrations.at(-1) ?? '(none)'}, this server has ${applied.at(-1) ?? '(none)'}: restore it with the version of bandcollab that made it, then upgrade`,
      );
    }
    const filled = await this.repository.tablesWithRows();
    if (filled.length > 0) throw new BackupError(`the database is not empty (rows in ${filled.join(', ')}): restore only onto an empty database`);
    if (this.store.kind === 'fs') {
      for (const stored of [this.objects.local.filesDir, this.objects.local.imagesDir, this.objects.local.previewsDir]) await assertEmptyDirectory(stored, stored);
    } else if (manifest.objects === undefined) {
      // A backup that copied its files, restored into a bucket: none of its keys may be there already (the source
      // server's own bucket, named again with only a new DATABASE_URL). Writing would replace its objects, and a
      // failure remove them.
      for (const file of manifest.files) {
        if (await this.store.head(file.path)) throw new BackupError(`the store already holds ${file.path}: restore only into an empty bucket or S3_PREFIX`);
      }
    }
    if (manifest.objects !== undefined) await this.checkBucket(dir, manifest.objects);

    const written: string[] = [];
    try {
      // readBackup checked every path: `files/<name>` or `images/<name>`, inside `dir`, no links. They are the keys.
      for (const file of manifest.files) {
        const hash = createHash('sha256');
        const hashing = new Transform({
          transform(chunk: Buffer, _encoding, callback) {
            hash.update(chunk);
            callback(null, chunk);
          },
        });
        const source = createReadStream(path.join(dir, file.path)).once('error', (error) => hashing.destroy(error));
        written.push(file.path);
        const { size } = await this.store.write(file.path, source.pipe(hashing));
        if (hash.digest('hex') !== file.sha256 || size !== file.size) throw new BackupError(`${dir}: ${file.path} does not match its sha256 in the manifest`);
      }
      const carried = new Set([...manifest.files.map((file) => file.path), ...(manifest.objects ?? []).map((object) => object.key)]);
      const { remade } = await this.repository.load(manifest.tables, (table) => createReadStream(path.join(dir, table.path)), carried);
      return { previewsRemade: remade };
    } catch (error) {
      for (const key of written) await this.store.delete(key).catch(() => undefined);
      throw error;
    }
  }
}

/** Reads and checks a backup's manifest and its database files before anything is restored. */
export async function readBackup(dir: string): Promise<Manifest> {
  let manifest: Manifest;
  try {
    manifest = JSON.parse(await readFile(path.join(dir, MANIFEST), 'utf8')) as Manifest;
  } catch (error) {
    throw new BackupError(`${dir} is not a complete backup (no readable ${MANIFEST}): ${error instanceof Error ? error.message : String(error)}`);
  }
  if (manifest.format !== FORMAT) throw new BackupError(`${dir}: backup format ${String(manifest.format)} is not one this server reads (${FORMAT})`);
  for (const listed of [...manifest.tables, ...manifest.files]) await assertInside(dir, listed.path);
  for (const table of manifest.tables) await verify(dir, table);
  return manifest;
}

/** `database/<name>`, `files/<name>`, `images/<name>`, `previews/<name>`: the only places a backup's manifest may point. */
const MANIFEST_PATH = /^(database|files|images|previews)\/([^/\\]+)$/;

/**
 * A manifest is read from a folder someone may have handed over: a path it lists must name a regular file
 * inside that folder, reached without a symbolic link (`..`, an absolute path or a link would restore, say,
 * /etc/shadow into a table, or a running server's files).
 */
async function assertInside(dir: string, listed: unknown): Promise<void> {
  const match = typeof listed === 'string' ? MANIFEST_PATH.exec(listed) : null;
  const unsafe = (reason: string) => new BackupError(`${dir}: the manifest lists an unsafe path ${String(listed)} (${reason})`);
  if (!match || match[2] === '.' || match[2] === '..') throw unsafe('not database/, files/, images/ or previews/ and a plain file name');
  for (const [part, regularFile] of [[match[1]!, false], [listed as string, true]] as const) {
    let found: Stats;
    try {
      found = await lstat(path.join(dir, part));
    } catch (error) {
      throw unsafe(error instanceof Error ? error.message : String(error));
    }
    if (found.isSymbolicLink()) throw unsafe(`${part} is a symbolic link`);
    if (regularFile ? !found.isFile() : !found.isDirectory()) throw unsafe(`${part} is not a ${regularFile ? 'regular file' : 'directory'}`);
  }
}

async function assertEmptyDirectory(dir: string, what: string): Promise<void> {
  let entries: string[];
  try {
    entries = await readdir(dir);
  } catch (error) {
    if (isMissing(error)) return;
    throw error;
  }
  if (entries.length > 0) throw new BackupError(`${what} is not empty: ${dir}`);
}

/** Writes `source` to a new file (0600), hashing it on the way. */
async function copyHashed(source: Readable, target: string, relative: string): Promise<StoredFile> {
  const hash = createHash('sha256');
  let size = 0;
  await pipeline(
    source,
    async function* (chunks: AsyncIterable<Buffer>) {
      for await (const chunk of chunks) {
        hash.update(chunk);
        size += chunk.length;
        yield chunk;
      }
    },
    createWriteStream(target, { flags: 'wx', mode: 0o600 }),
  );
  return { path: relative, size, sha256: hash.digest('hex') };
}

async function verify(dir: string, file: StoredFile): Promise<void> {
  let sha256: string;
  try {
    const hash = createHash('sha256');
    await pipeline(createReadStream(path.join(dir, file.path)), hash);
    sha256 = hash.digest('hex');
  } catch (error) {
    throw new BackupError(`${dir}: ${file.path} cannot be read: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (sha256 !== file.sha256) throw new BackupError(`${dir}: ${file.path} does not match its sha256 in the manifest`);
}

function isMissing(error: unknown): boolean {
  return error instanceof ObjectMissing || (error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT';
}
