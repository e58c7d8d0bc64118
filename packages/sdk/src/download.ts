import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import type { Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { abortedOr, BandNetworkError } from './errors.js';
import type { Progress } from './transfer.js';
import { backoffMs, joinedSignal, type RequestOptions, type RequestSpec, type StreamedResponse, type Transport } from './transport.js';

export interface DownloadOptions {
  /** A file path (created or overwritten) or a stream (written to, not ended). */
  to: string | Writable;
  onProgress?: (progress: Progress) => void;
  signal?: AbortSignal;
  /** Only these bytes (inclusive, as HTTP ranges): `{ start: 0, end: 1023 }` is the first KiB. */
  range?: { start: number; end?: number };
}

export interface DownloadResult {
  /** Bytes written. */
  size: number;
  /** The file written, when `to` was a path. */
  path?: string;
}

/**
 * Streams a GET's body to a file or a stream. When the connection breaks mid-body, asks again for the
 * remaining bytes with a Range header (up to the client's retry count) and continues where it stopped.
 */
export async function download(
  transport: Transport,
  request: Pick<RequestSpec, 'path' | 'auth'>,
  options: DownloadOptions,
  requestOptions: RequestOptions = {},
): Promise<DownloadResult> {
  // Node keeps nothing in memory: a JavaScript caller without a target is told so before anything is sent.
  if (!options?.to) throw new TypeError('download needs a target: { to: a file path or a Writable }');
  let target: Sink | undefined;
  const start = options.range?.start ?? 0;
  const end = options.range?.end;
  let written = 0;
  let total: number | null = null;
  // A whole file is checked against the sha256 the server sends as its ETag, across resumed parts too.
  const hash = options.range ? undefined : createHash('sha256');
  let expectedSha256: string | undefined;
  const signal = joinedSignal(options.signal, requestOptions.signal);
  try {
    for (let attempt = 0; ; attempt += 1) {
      const ranged = written > 0 || options.range !== undefined;
      const headers: Record<string, string> = { accept: '*/*' };
      if (ranged) headers.range = `bytes=${start + written}-${end ?? ''}`;
      const response = await transport.send({ ...request, method: 'GET', headers, signal: options.signal }, requestOptions);
      if (ranged && contentStart(response) !== start + written) {
        response.body.destroy();
        throw new BandNetworkError('The download was interrupted and the server could not resume it', {
          cause: new Error(`asked for bytes from ${start + written}, got status ${response.status}`),
        });
      }
      total ??= expectedLength(response);
      expectedSha256 ??= /^"([0-9a-f]{64})"$/.exec(String(response.headers.etag ?? ''))?.[1];
      // Opened only once there are bytes to write: a failed request leaves no file behind.
      target ??= typeof options.to === 'string' ? fileSink(options.to) : { stream: options.to, error: () => undefined };
      const sink = target;
      let sinkError: unknown;
      try {
        for await (const chunk of response.body as AsyncIterable<Buffer>) {
          written += chunk.length;
          hash?.update(chunk);
          options.onProgress?.({ loaded: written, total });
          sinkError = sink.error();
          if (!sinkError && !sink.stream.write(chunk)) await once(sink.stream, 'drain').catch((error) => (sinkError = error));
          if (sinkError) throw sinkError;
        }
        break;
      } catch (cause) {
        if (signal?.aborted) throw cause;
        if (sinkError) throw sinkError;
        if (attempt >= (requestOptions.retries ?? transport.retries)) {
          throw new BandNetworkError(`The download was interrupted after ${written} bytes`, { cause });
        }
        await sleep(backoffMs(attempt), undefined, { signal });
      }
    }
    if (hash && expectedSha256 && hash.digest('hex') !== expectedSha256) {
      throw new BandNetworkError('The downloaded bytes do not match the sha256 the server announced', {
        cause: new Error(`expected sha256 ${expectedSha256}`),
      });
    }
    if (typeof options.to === 'string') {
      await finished(target!.stream.end());
      return { size: written, path: options.to };
    }
    return { size: written };
  } catch (error) {
    if (target && typeof options.to === 'string') {
      await finished(target.stream.destroy()).catch(() => undefined);
      await rm(options.to, { force: true });
    }
    throw abortedOr(error, signal);
  }
}

interface Sink {
  stream: Writable;
  /** The error the stream failed with, if any. */
  error(): Error | undefined;
}

/** A file write stream whose errors are kept for the copy loop instead of crashing the process. */
function fileSink(file: string): Sink {
  let failure: Error | undefined;
  const stream = createWriteStream(file);
  stream.on('error', (error) => {
    failure = error;
  });
  return { stream, error: () => failure };
}

/** The offset of the first byte in the response: the Content-Range start for a 206, else 0. */
function contentStart(response: StreamedResponse): number {
  const range = String(response.headers['content-range'] ?? '');
  const match = /^bytes (\d+)-/.exec(range);
  return response.status === 206 && match ? Number(match[1]) : 0;
}

function expectedLength(response: StreamedResponse): number | null {
  const length = Number(response.headers['content-length']);
  return Number.isFinite(length) && response.headers['content-length'] !== undefined ? length : null;
}
