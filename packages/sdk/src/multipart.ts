import { createHash } from 'node:crypto';
import { createReadStream, ReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { PassThrough, pipeline, Readable, Transform } from 'node:stream';
import type FormData from 'form-data';
import { checkSize, type MultipartFile as FilePart, type Progress } from './transfer.js';
import type { RequestSpec, StreamBody } from './transport.js';
import { FILE_TYPE_PLURALS, FILE_TYPES, fileTypeFor } from './types.js';

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

type MultipartFile = FilePart<FileSource>;

let formData: Promise<typeof FormData> | undefined;

/**
 * form-data (with mime-types and its database, and a dozen helpers) is loaded by the first upload, not with
 * the SDK: a client that only reads (`band project list`) starts without it.
 */
function loadFormData(): Promise<typeof FormData> {
  formData ??= import('form-data').then((module) => module.default);
  return formData;
}

/**
 * A multipart/form-data body streamed with form-data: text fields first (so the server can check
 * access before any byte of the file), then the file, read as it is sent.
 */
export async function multipartBody(fields: Record<string, string | undefined>, file?: MultipartFile): Promise<StreamBody> {
  const FormData = await loadFormData();
  return {
    reopenable: () => file?.source.reopenable() ?? true,
    open() {
      const form = new FormData();
      for (const [name, value] of Object.entries(fields)) {
        if (value !== undefined) form.append(name, value);
      }
      const piped = new PassThrough();
      // Read only once the request pulls the body's first bytes: a connection refused before that leaves a
      // caller's one-shot stream unread, so the request can be sent again. (A generator starts at the first
      // pull, whether the sender pipes the body, as undici does, or iterates it, as fetch does.)
      const body = Readable.from(
        (async function* () {
          form.pipe(piped);
          yield* piped;
        })(),
        { objectMode: false },
      );
      body.on('close', () => piped.destroy());
      if (file) {
        const source = file.source.open();
        form.append(file.field, file.onProgress ? counted(source, file.source.size, file.onProgress) : source, {
          filename: file.filename,
          contentType: file.contentType ?? 'application/octet-stream',
          knownLength: file.source.size ?? undefined,
        });
        // form-data does not close its sources when the request is aborted: close the file here.
        body.on('close', () => source.destroy());
      }
      const headers: Record<string, string> = form.getHeaders();
      if (form.hasKnownLength()) headers['content-length'] = String(form.getLengthSync());
      form.on('error', (error: Error) => piped.destroy(error));
      return { body, headers };
    },
  };
}

/** The file's bytes, counted for progress as they are pulled into the request. */
function counted(source: Readable, total: number | null, onProgress: (progress: Progress) => void): Readable {
  let loaded = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      loaded += chunk.length;
      onProgress({ loaded, total });
      callback(null, chunk);
    },
  });
  return pipeline(source, counter, () => undefined);
}

/**
 * The body of a create or update that may carry an image: multipart when a new image is given, else
 * JSON (where `image: null` clears the current one).
 */
export async function imageFormOrJson(
  fields: Record<string, string | null | undefined>,
  image: FileInput | null | undefined,
): Promise<Pick<RequestSpec, 'json' | 'stream'>> {
  if (image === undefined || image === null) {
    return { json: image === null ? { ...fields, image: null } : fields };
  }
  const source = await fileSource(image);
  const filename = source.filename ?? imageNameFor(image);
  const rule = fileTypeFor(filename);
  checkSize(source, IMAGE_LIMIT, FILE_TYPE_PLURALS.IMAGE);
  // Multipart has no null: an empty description is how a form clears it.
  const textFields = Object.fromEntries(Object.entries(fields).map(([name, value]) => [name, value === null ? '' : value]));
  return {
    stream: await multipartBody(textFields, {
      field: 'image',
      source,
      filename,
      contentType: rule?.type === 'IMAGE' ? rule.mimeType : undefined,
    }),
  };
}

const IMAGE_LIMIT = FILE_TYPES.png!.maxBytes;

/** The server wants an extension that matches the content: name unnamed image bytes after their signature. */
function imageNameFor(image: FileInput): string {
  if (image instanceof Uint8Array) {
    const bytes = Buffer.from(image.buffer, image.byteOffset, Math.min(image.byteLength, 12));
    if (bytes.subarray(0, 4).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47]))) return 'image.png';
    if (bytes.subarray(0, 3).equals(Buffer.from([0xff, 0xd8, 0xff]))) return 'image.jpg';
    if (bytes.subarray(0, 4).toString('latin1') === 'GIF8') return 'image.gif';
    if (bytes.subarray(8, 12).toString('latin1') === 'WEBP') return 'image.webp';
  }
  throw new TypeError('image: pass a file path, a named File, or the bytes of a JPEG, PNG, GIF or WebP image');
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
