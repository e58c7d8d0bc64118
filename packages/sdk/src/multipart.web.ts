// The web build's uploads (swapped in for multipart.ts by tsup): a Blob or File goes into a FormData, which the
// runtime streams from its own storage (the bytes never pass through JavaScript); a ReadableStream is framed as
// multipart around its chunks as they come. No node:* module and no Buffer.
import { checkSize, type MultipartFile as FilePart } from './transfer.js';
import type { RequestSpec, StreamBody } from './transport.js';
import { FILE_TYPE_PLURALS, FILE_TYPES, fileTypeFor } from './types.js';
import { type FileInput, type FileSource, fileSource } from './upload-source.web.js';

type MultipartFile = FilePart<FileSource>;

/** Text fields first (so the server can check access before any byte of the file), then the file. */
export async function multipartBody(fields: Record<string, string | undefined>, file?: MultipartFile): Promise<StreamBody> {
  const defined = Object.entries(fields).filter((entry): entry is [string, string] => entry[1] !== undefined);
  return {
    reopenable: () => file?.source.replayable ?? true,
    open() {
      const bytes = file?.source.open();
      if (file && bytes instanceof ReadableStream) return framed(defined, file, bytes);
      const form = new FormData();
      for (const [name, value] of defined) form.append(name, value);
      if (file && bytes) {
        // A slice with the type is a view of the same bytes, not a copy.
        form.append(file.field, (bytes as Blob).slice(0, (bytes as Blob).size, file.contentType ?? 'application/octet-stream'), file.filename);
        // fetch tells nothing of an upload's progress: the whole file counts as sent when the answer comes.
        file.onProgress?.({ loaded: 0, total: file.source.size });
      }
      return { body: form, headers: {} };
    },
  };
}

/** A multipart body around a stream's chunks, counted for progress as they are pulled into the request. */
function framed(fields: Array<[string, string]>, file: MultipartFile, bytes: ReadableStream<Uint8Array>): ReturnType<StreamBody['open']> {
  const boundary = `bandcollab-${crypto.randomUUID()}`;
  const part = (disposition: string, type = '') => `--${boundary}\r\nContent-Disposition: form-data; ${disposition}\r\n${type}\r\n`;
  const quoted = (value: string) => `"${value.replace(/"/g, '%22').replace(/\r|\n/g, ' ')}"`;
  const head =
    fields.map(([name, value]) => `${part(`name=${quoted(name)}`)}${value}\r\n`).join('') +
    part(`name=${quoted(file.field)}; filename=${quoted(file.filename)}`, `Content-Type: ${file.contentType ?? 'application/octet-stream'}\r\n`);
  const encoder = new TextEncoder();
  let loaded = 0;
  const reader = bytes.getReader();
  const body = new ReadableStream<Uint8Array>({
    start: (controller) => controller.enqueue(encoder.encode(head)),
    async pull(controller) {
      const { done, value } = await reader.read();
      if (done) {
        controller.enqueue(encoder.encode(`\r\n--${boundary}--\r\n`));
        return controller.close();
      }
      loaded += value.byteLength;
      file.onProgress?.({ loaded, total: null });
      controller.enqueue(value);
    },
    cancel: (reason) => reader.cancel(reason),
  });
  return { body, headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}

/** Multipart with a new image, else JSON (where `image: null` clears the current one). */
export async function imageFormOrJson(
  fields: Record<string, string | null | undefined>,
  image: FileInput | null | undefined,
): Promise<Pick<RequestSpec, 'json' | 'stream'>> {
  if (image === undefined || image === null) return { json: image === null ? { ...fields, image: null } : fields };
  const source = await fileSource(image);
  const filename = source.filename ?? (await imageNameFor(image));
  const rule = fileTypeFor(filename);
  checkSize(source, FILE_TYPES.png!.maxBytes, FILE_TYPE_PLURALS.IMAGE);
  const textFields = Object.fromEntries(Object.entries(fields).map(([name, value]) => [name, value === null ? '' : value]));
  return {
    stream: await multipartBody(textFields, { field: 'image', source, filename, contentType: rule?.type === 'IMAGE' ? rule.mimeType : undefined }),
  };
}

/** The server wants an extension that matches the content: name unnamed image bytes after their signature. */
async function imageNameFor(image: FileInput): Promise<string> {
  if (!(image instanceof ReadableStream)) {
    const head = new Uint8Array(await (image instanceof Blob ? image : new Blob([image as Uint8Array<ArrayBuffer>])).slice(0, 12).arrayBuffer());
    const text = String.fromCharCode(...head);
    if (text.startsWith('\x89PNG')) return 'image.png';
    if (text.startsWith('\xff\xd8\xff')) return 'image.jpg';
    if (text.startsWith('GIF8')) return 'image.gif';
    if (text.slice(8, 12) === 'WEBP') return 'image.webp';
  }
  throw new TypeError('image: pass a named File, or a Blob or the bytes of a JPEG, PNG, GIF or WebP image');
}
