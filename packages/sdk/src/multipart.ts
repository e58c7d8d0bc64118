// The Node build's multipart bodies (one request per upload; multipart.web.ts is the web build's): text fields
// first, then the file, streamed with form-data as the request pulls it.
import { PassThrough, pipeline, Readable, Transform } from 'node:stream';
import type FormData from 'form-data';
import { checkSize, type MultipartFile as FilePart, type Progress } from './transfer.js';
import type { RequestSpec, StreamBody } from './transport.js';
import { FILE_TYPE_PLURALS, FILE_TYPES, fileTypeFor } from './types.js';
import { type FileInput, type FileSource, fileSource } from './upload-source.js';

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
