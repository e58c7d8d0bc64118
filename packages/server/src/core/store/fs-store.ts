import { randomUUID } from 'node:crypto';
import { close as closeFd, createReadStream, open as openFd, read as readFd } from 'node:fs';
import { chmod, lstat, mkdir, open, readdir, rename, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { promisify } from 'node:util';
import { type BlobReader, type BlobStore, type ByteRange, type ListedObject, ObjectMissing, type UploadedPart } from './blob-store.js';

const PRIVATE_FILE = 0o600;
const openDescriptor = promisify(openFd);
const closeDescriptor = promisify(closeFd);
/** Bytes per read of a stored object. */
const READ_CHUNK_BYTES = 256 * 1024;
const PRIVATE_DIR = 0o700;
/** A resumable upload's parts land in one file at their offsets: this size only numbers them. */
const FS_PART_SIZE = 8 * 1024 * 1024;

/**
 * The local directory: key `files/<id>.<ext>` is DATA_DIR/files/<id>.<ext>. Bytes are written under tmp/
 * and renamed into place (same file system, atomic), so a key never names a partial file; a multipart upload
 * is one file under resumable/, its parts written at their offsets and synced, renamed into place on
 * completion. Only the server's user can read any of it (files 0600).
 */
export class FsBlobStore implements BlobStore {
  readonly kind = 'fs';
  readonly partSize = FS_PART_SIZE;
  private readonly tempDir: string;
  private readonly multipartDir: string;

  constructor(private readonly root: string) {
    this.tempDir = path.join(root, 'tmp');
    this.multipartDir = path.join(root, 'resumable');
  }

  async write(key: string | (() => string | Promise<string>), body: Readable): Promise<{ key: string; size: number }> {
    const temp = path.join(this.tempDir, `${randomUUID()}.part`);
    // 'wx': a fresh name, never an existing file; the mode is masked by the umask, which can only tighten it.
    const handle = await open(temp, 'wx', PRIVATE_FILE);
    const sink = handle.createWriteStream();
    try {
      await pipeline(body, sink);
      const resolved = typeof key === 'string' ? key : await key();
      await rename(temp, this.pathOf(resolved));
      return { key: resolved, size: sink.bytesWritten };
    } catch (error) {
      sink.destroy();
      await unlink(temp).catch(() => undefined);
      throw error;
    }
  }

  async read(key: string, range?: ByteRange): Promise<Readable> {
    // Opened first, so a missing object is known before any answer goes out. A plain descriptor read by
    // fs.createReadStream: FileHandle.createReadStream reads through promises and cost downloads twice the CPU.
    const fd = await this.openObject(key);
    return createReadStream('', { fd, start: range?.start, end: range?.end, highWaterMark: READ_CHUNK_BYTES });
  }

  async openReader(key: string, range?: ByteRange): Promise<BlobReader> {
    const fd = await this.openObject(key);
    let position = range?.start ?? 0;
    const end = range ? range.end + 1 : Infinity;
    return {
      // fs.read on the descriptor, for the reason read() gives.
      read: (buffer) =>
        new Promise((resolve, reject) => {
          const length = Math.min(buffer.length, end - position);
          if (length <= 0) return resolve(0);
          readFd(fd, buffer, 0, length, position, (error, bytesRead) => {
            if (error) return reject(error);
            position += bytesRead;
            resolve(bytesRead);
          });
        }),
      close: () => closeDescriptor(fd),
    };
  }

  async downloadUrl(): Promise<null> {
    return null;
  }

  async head(key: string): Promise<{ size: number; modifiedAt: Date } | null> {
    const info = await stat(this.pathOf(key)).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return null;
      throw error;
    });
    return info && { size: info.size, modifiedAt: info.mtime };
  }

  async delete(key: string): Promise<void> {
    await unlink(this.pathOf(key)).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOENT') throw error;
    });
  }

  /** The files of the directory `prefix` names (DATA_DIR/files/, …), by name; none when it does not exist. */
  async *list(prefix: string): AsyncIterable<ListedObject> {
    if (!/^(orphans\/)?(files|images)\/$/.test(prefix)) throw new Error(`not a storage key prefix: ${prefix}`);
    const names = await readdir(path.join(this.root, prefix)).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return [];
      throw error;
    });
    for (const name of names.sort()) {
      // Gone meanwhile (a delete), or not a file: no object.
      const info = await lstat(path.join(this.root, prefix, name)).catch(() => null);
      if (info?.isFile() && isKey(`${prefix}${name}`)) yield { key: `${prefix}${name}`, size: info.size, modifiedAt: info.mtime };
    }
  }

  /** A rename (same file system): the object is at one key or the other, never at both or neither. */
  async move(from: string, to: string): Promise<void> {
    const target = this.pathOf(to);
    await mkdir(path.dirname(target), { recursive: true, mode: PRIVATE_DIR });
    await rename(this.pathOf(from), target);
    // A file someone put there by hand keeps no wider mode than the server's own once it is set aside.
    await chmod(target, PRIVATE_FILE);
  }

  async startMultipart(): Promise<string> {
    const uploadId = randomUUID();
    await (await open(this.multipartPath(uploadId), 'wx', PRIVATE_FILE)).close();
    return uploadId;
  }

  async writePart(key: string, uploadId: string, partNumber: number, bytes: Buffer): Promise<UploadedPart> {
    const handle = await this.openMultipart(key, uploadId);
    try {
      await handle.write(bytes, 0, bytes.length, (partNumber - 1) * this.partSize);
      // An answered PATCH is durable: its part is on disk before it is recorded.
      await handle.datasync();
    } finally {
      await handle.close();
    }
    return { partNumber, etag: `${partNumber}-${bytes.length}` };
  }

  async completeMultipart(key: string, uploadId: string, parts: UploadedPart[]): Promise<void> {
    const last = parts.at(-1);
    const size = last ? (last.partNumber - 1) * this.partSize + Number(last.etag.split('-')[1]) : 0;
    const handle = await this.openMultipart(key, uploadId);
    try {
      // Bytes past the last recorded part were never acknowledged (a crash before its record).
      await handle.truncate(size);
      await handle.datasync();
    } finally {
      await handle.close();
    }
    await rename(this.multipartPath(uploadId), this.pathOf(key));
  }

  async abortMultipart(_key: string, uploadId: string): Promise<void> {
    await unlink(this.multipartPath(uploadId)).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOENT') throw error;
    });
  }

  /** Creates the directories keys live in (files/, images/, previews/) and the driver's own (tmp/, resumable/). */
  async prepare(): Promise<void> {
    for (const dir of ['files', 'images', 'previews', 'tmp', 'resumable']) await mkdir(path.join(this.root, dir), { recursive: true, mode: PRIVATE_DIR });
  }

  private openObject(key: string): Promise<number> {
    return openDescriptor(this.pathOf(key), 'r').catch((error: NodeJS.ErrnoException) => {
      throw error.code === 'ENOENT' ? new ObjectMissing(key) : error;
    });
  }

  private pathOf(key: string): string {
    if (!isKey(key)) throw new Error(`not a storage key: ${key}`);
    return path.join(this.root, key);
  }

  /** A multipart upload that is not there (aborted, or never in this DATA_DIR) names no object. */
  private async openMultipart(key: string, uploadId: string) {
    return open(this.multipartPath(uploadId), 'r+').catch((error: NodeJS.ErrnoException) => {
      throw error.code === 'ENOENT' ? new ObjectMissing(key) : error;
    });
  }

  private multipartPath(uploadId: string): string {
    if (!/^[0-9a-f-]{36}$/.test(uploadId)) throw new Error(`not a multipart upload id: ${uploadId}`);
    return path.join(this.multipartDir, uploadId);
  }
}

/**
 * A key names a file in files/ or images/ (or in orphans/files/, orphans/images/): ours are `<uuid>.<ext>`, but a
 * file copied in by hand may have any name, and the `orphans` command lists, moves and deletes it as well.
 */
const isKey = (key: string): boolean => /^(orphans\/)?(files|images|previews)\/[^/\\]+$/.test(key) && !key.includes('..');

/** A file outside the store (a test fixture) as a source of ranges, as analysis reads stored objects. */
export async function localFileSource(filePath: string): Promise<{ size: number; read(range?: ByteRange): Promise<Readable> }> {
  const { size } = await stat(filePath);
  return { size, read: async (range) => createReadStream(filePath, { start: range?.start, end: range?.end, highWaterMark: READ_CHUNK_BYTES }) };
}
