// The web build's downloads (swapped in for download.ts): the body piped to a WritableStream, or kept as a Blob
// when there is none (a browser's "save as" takes a Blob's object URL); no file paths.
import type { Progress } from './transfer.js';
import type { RequestOptions, RequestSpec, Transport } from './transport.js';

export interface DownloadOptions {
  /** Where the bytes go (a file handle's writable, a TransformStream's side…); closed at the end. Without it the bytes come back as `blob`. */
  to?: WritableStream<Uint8Array>;
  onProgress?: (progress: Progress) => void;
  signal?: AbortSignal;
  /** Only these bytes (inclusive, as HTTP ranges). */
  range?: { start: number; end?: number };
}

export interface DownloadResult {
  size: number;
  /** The bytes, with the answer's content type, when no `to` was given. */
  blob?: Blob;
}

export async function download(
  transport: Transport,
  request: Pick<RequestSpec, 'path' | 'auth'>,
  // A JavaScript caller may leave the target out altogether, as the types allow an empty one.
  options: DownloadOptions = {},
  requestOptions: RequestOptions = {},
): Promise<DownloadResult> {
  const headers: Record<string, string> = { accept: '*/*' };
  if (options.range) headers.range = `bytes=${options.range.start}-${options.range.end ?? ''}`;
  const response = await transport.send({ ...request, method: 'GET', headers, signal: options.signal }, requestOptions);
  const length = response.headers['content-length'];
  const total = length === undefined ? null : Number(length);
  let size = 0;
  const counter = new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      size += chunk.byteLength;
      options.onProgress?.({ loaded: size, total });
      controller.enqueue(chunk);
    },
  });
  const counted = response.body.stream().pipeThrough(counter);
  if (!options.to) {
    const bytes = await new Response(counted).arrayBuffer();
    return { size, blob: new Blob([bytes], { type: String(response.headers['content-type'] ?? '') }) };
  }
  await counted.pipeTo(options.to, { signal: options.signal });
  return { size };
}
