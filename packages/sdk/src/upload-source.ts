// How an upload's file is read, for both of its senders (multipart.ts, resumable.ts): the caller's input (a path,
// bytes, a Node or Web stream, a Blob) normalised to one FileSource, and its sha256 when the upload compares it.
// The web build swaps in upload-source.web.ts.
import { createHash } from 'node:crypto';
import { createReadStream, ReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';

/** What can be uploaded: a file path, bytes, a Node or Web stream or a Blob (a File keeps its name). */
export type FileInput = string | Buffer | Uint8Array | Readable | ReadableStream<Uint8Array> | Blob;

/** An upload's `ifChanged`: hash the file first (true), or this sha256 (hex) of it. */
export type IfChanged = boolean | { sha256: string };

/** A file input resolved to a name, a size (when knowable) and a way to read its bytes. */
export interface FileSource {
  filename: string | undefined;
  size: number | null;
  open(): Readable;
  /** The bytes from `offset` on, for a replayable source (a resumable upload continues there). */
  openFrom?(offset: number): Readable;
  /** Each open() reads the bytes afresh (a path, bytes, a Blob); false for a caller's stream. */
  replayable: boolean;
  /** Whether open() may be called again: always for a replayable source; for a stream, while none of it was read. */
  reopenable(): boolean;
  /** A file on disk as it is now (path, size, modification time): what a resumed upload must match. */
  fingerprint?: string;
}

/**
 * Bytes per read of a file being uploaded. Each read is a new buffer outside the JS heap that only a
 * collection gives back, and what sets collections off is the few JS objects made per chunk: smaller reads
 * mean more frequent collections and fewer dead buffers at the peak. A 500 MiB upload peaked at 138–157 MiB
 * RSS with 64 KiB reads, 122–124 MiB with 16 KiB ones, at the same speed (docs/benchmarks.md).
 */
const FILE_READ_BYTES = 16 * 1024;

export async function fileSource(input: FileInput, filename?: string): Promise<FileSource> {
  if (typeof input === 'string') {
    const info = await stat(input);
    if (!info.isFile()) throw new TypeError(`${input} is not a file`);
    return {
      filename: filename ?? path.basename(input),
      size: info.size,
      open: () => createReadStream(input, { highWaterMark: FILE_READ_BYTES }),
      openFrom: (offset) => createReadStream(input, { start: offset, highWaterMark: FILE_READ_BYTES }),
      replayable: true,
      reopenable: () => true,
      fingerprint: `${path.resolve(input)}\n${info.size}\n${info.mtimeMs}`,
    };
  }
  if (input instanceof Uint8Array) {
    const bytes = Buffer.from(input.buffer, input.byteOffset, input.byteLength);
    return {
      filename,
      size: bytes.length,
      open: () => Readable.from(slices(bytes)),
      openFrom: (offset) => Readable.from(slices(bytes.subarray(offset))),
      replayable: true,
      reopenable: () => true,
    };
  }
  if (input instanceof ReadableStream) {
    return { filename, size: null, ...oneShot(Readable.fromWeb(input as Parameters<typeof Readable.fromWeb>[0])) };
  }
  if (isStream(input)) {
    const knownFile = input instanceof ReadStream && typeof input.path === 'string' && (input as { start?: number }).start === undefined;
    return {
      filename: filename ?? (knownFile ? path.basename(input.path as string) : undefined),
      size: knownFile ? (await stat(input.path as string)).size : null,
      ...oneShot(input),
    };
  }
  if (!(input instanceof Blob)) throw new TypeError('file: expected a path, a Buffer or Uint8Array, a Readable or a Blob');
  const named = (input as Partial<File>).name;
  return {
    filename: filename ?? (named || undefined),
    size: input.size,
    open: () => Readable.fromWeb(input.stream() as Parameters<typeof Readable.fromWeb>[0]),
    openFrom: (offset) => Readable.fromWeb(input.slice(offset).stream() as Parameters<typeof Readable.fromWeb>[0]),
    replayable: true,
    reopenable: () => true,
  };
}

/**
 * A caller's stream, read only when a request pulls its first bytes: until then a failed attempt (a refused
 * connection) leaves it whole and the request may be sent again; once read, it is not reopenable.
 */
function oneShot(input: Readable): Pick<FileSource, 'open' | 'replayable' | 'reopenable'> {
  let read = false;
  return {
    // A view destroyed before it was read leaves the caller's stream alone; once reading, destroying it ends the stream too.
    open: () =>
      Readable.from(
        (async function* () {
          read = true;
          yield* input;
        })(),
        { objectMode: false },
      ),
    replayable: false,
    reopenable: () => !read,
  };
}

/** Node streams from any copy of the stream module (not only this one's `Readable`). */
function isStream(input: FileInput): input is Readable {
  return typeof input === 'object' && typeof (input as Partial<Readable>).pipe === 'function';
}

/** Bytes in 64 KiB views (no copies), so progress moves as they are sent. */
function* slices(bytes: Buffer): Generator<Buffer> {
  for (let offset = 0; offset < bytes.length; offset += 65_536) yield bytes.subarray(offset, offset + 65_536);
}

/** The sha256 (hex) of a source that can be read again (its upload reads it once more). */
export async function sha256Of(source: FileSource, signal: AbortSignal | undefined): Promise<string> {
  if (!source.replayable) throw new TypeError('upload: `ifChanged` needs a path, bytes or a Blob (a stream cannot be read twice)');
  const hash = createHash('sha256');
  for await (const chunk of source.open()) {
    signal?.throwIfAborted();
    hash.update(chunk as Buffer);
  }
  return hash.digest('hex');
}
