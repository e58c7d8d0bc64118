import { chmod, lstat, mkdir, readdir, unlink } from 'node:fs/promises';
import path from 'node:path';
import { inject, injectable } from 'tsyringe';
import type { Config } from './config.js';
import { CONFIG, LOGGER } from './di.js';
import type { Logger } from './logger.js';

/**
 * DATA_DIR as the local driver lays it out (core/store/fs-store.ts), and its housekeeping: the directories and
 * their modes, and the temporary uploads a dead server left. The bytes themselves are read, written and removed
 * only through the BlobStore (StoredObjects removes them). With STORAGE=fs they live under DATA_DIR:
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
export class LocalDataDir {
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

const PRIVATE_FILE = 0o600;
const PRIVATE_DIR = 0o700;
