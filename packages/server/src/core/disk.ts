import { randomUUID } from 'node:crypto';
import { mkdir, readdir, rename, unlink } from 'node:fs/promises';
import path from 'node:path';
import { inject, injectable } from 'tsyringe';
import type { Config } from './config.js';
import { CONFIG, LOGGER } from './di.js';
import type { Logger } from './logger.js';

/**
 * Where stored bytes live under DATA_DIR:
 *   files/<id>.<ext>   uploaded files (the row in `files` names them)
 *   images/<name>      project and vibe images (the `image` column names them)
 *   tmp/               uploads in progress; renamed into place once complete, swept at start-up
 * Bytes are written to tmp/ first and renamed (same file system, atomic), so a stored path never
 * holds a partial file.
 */
@injectable()
export class Disk {
  readonly filesDir: string;
  readonly imagesDir: string;
  readonly tempDir: string;

  constructor(
    @inject(CONFIG) config: Config,
    @inject(LOGGER) private readonly log: Logger,
  ) {
    this.filesDir = path.join(config.dataDir, 'files');
    this.imagesDir = path.join(config.dataDir, 'images');
    this.tempDir = path.join(config.dataDir, 'tmp');
  }

  /** Creates the directories; runs at start-up, before the server listens. */
  async prepare(): Promise<void> {
    for (const dir of [this.filesDir, this.imagesDir, this.tempDir]) await mkdir(dir, { recursive: true });
  }

  /** A fresh path under tmp/ for an upload in progress. */
  newTempPath(): string {
    return path.join(this.tempDir, `${randomUUID()}.part`);
  }

  /** `extension` must come from the FILE_TYPES table, never from a client. */
  filePath(id: string, extension: string): string {
    return path.join(this.filesDir, `${id}.${extension}`);
  }

  /** `name` is a stored image name (`<uuid>.<ext>`), never a client's. */
  imagePath(name: string): string {
    return path.join(this.imagesDir, path.basename(name));
  }

  /** Moves a complete temporary file to its final path. */
  async moveIntoPlace(tempPath: string, finalPath: string): Promise<void> {
    await rename(tempPath, finalPath);
  }

  /**
   * Deletes a file if it exists and never throws: used for cleanup after failures and for bytes whose row
   * is already gone (after commit). A failure is logged; the start-up sweep removes what is left.
   */
  async removeQuietly(filePath: string): Promise<void> {
    try {
      await unlink(filePath);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') this.log.error('could not remove a stored file', { path: filePath, error });
    }
  }

  /** Removes every leftover of uploads that never completed. Only safe before the server takes requests. */
  async clearTemp(): Promise<number> {
    const names = await readdir(this.tempDir);
    for (const name of names) await this.removeQuietly(path.join(this.tempDir, name));
    return names.length;
  }

  /** Removes the files in `dir` whose names `keep` does not hold. Only safe before the server takes requests. */
  async removeUnlisted(dir: string, keep: ReadonlySet<string>): Promise<number> {
    const strays = (await readdir(dir)).filter((name) => !keep.has(name));
    for (const name of strays) await this.removeQuietly(path.join(dir, name));
    return strays.length;
  }
}
