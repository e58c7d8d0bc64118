import { createHash, randomUUID } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Transform, pipeline, type Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { BandApiError, BandNetworkError } from './errors.js';
import type { FileSource, Progress } from './multipart.js';
import { backoffMs, type RequestOptions, type StreamedResponse, type Transport } from './transport.js';

/**
 * Where unfinished resumable uploads are remembered between runs: a fingerprint of what is being uploaded
 * (the file's path, size and modification time, and the cut) mapped to the upload's URL.
 */
export interface ResumeStore {
  get(fingerprint: string): Promise<string | undefined>;
  set(fingerprint: string, uploadUrl: string): Promise<void>;
  remove(fingerprint: string): Promise<void>;
}

/** The changes in progress to each store file in this process, one after another. */
const fileQueues = new Map<string, Promise<unknown>>();

/**
 * A ResumeStore in one JSON file (mode 0600, in a 0700 directory), written whole and renamed into place so a
 * reader never sees half of it. Within a process, changes to one file (parallel uploads) run one after
 * another, whichever instance makes them. Two processes writing at once may lose one's entry: that upload
 * then starts again from its first byte, nothing worse.
 */
export class FileResumeStore implements ResumeStore {
  constructor(readonly filePath: string) {}

  async get(fingerprint: string): Promise<string | undefined> {
    return (await this.read())[fingerprint];
  }

  set(fingerprint: string, uploadUrl: string): Promise<void> {
    return this.change((entries) => ({ ...entries, [fingerprint]: uploadUrl }));
  }

  remove(fingerprint: string): Promise<void> {
    return this.change((entries) => {
      if (!(fingerprint in entries)) return null;
      const { [fingerprint]: _removed, ...rest } = entries;
      return rest;
    });
  }

  /** Reads, changes and writes the file, after the changes queued before; `edit` answers null for no change. */
  private change(edit: (entries: Record<string, string>) => Record<string, string> | null): Promise<void> {
    const previous = fileQueues.get(this.filePath) ?? Promise.resolve();
    const next = previous
      .catch(() => undefined)
      .then(async () => {
        const changed = edit(await this.read());
        if (changed) await this.write(changed);
      });
    fileQueues.set(this.filePath, next);
    void next.finally(() => {
      if (fileQueues.get(this.filePath) === next) fileQueues.delete(this.filePath);
    }).catch(() => undefined);
    return next;
  }

  private async read(): Promise<Record<string, string>> {
    try {
      const parsed: unknown = JSON.parse(await readFile(this.filePath, 'utf8'));
      return parsed !== null && typeof parsed === 'object' ? (parsed as Record<string, string>) : {};
    } catch (error) {
      // Absent (nothing to resume) or unreadable (a torn write of an older version): start afresh.
      if ((error as NodeJS.ErrnoException).code === 'ENOENT' || error instanceof SyntaxError) return {};
      throw error;
    }
  }

  private async write(entries: Record<string, string>): Promise<void> {
    await mkdir(path.dirname(this.filePath), { recursive: true, mode: 0o700 });
    const temp = `${this.filePath}.${randomUUID()}.tmp`;
    await writeFile(temp, JSON.stringify(entries, null, 2), { mode: 0o600 });
    await rename(temp, this.filePath);
  }
}

/** Files of at least this size go through a resumable upload when `resumable` is 'auto'. */
export const RESUMABLE_MIN_BYTES = 8 * 1024 * 1024;

export interface ResumableUpload {
  cutId: string;
  source: FileSource;
  filename: string;
  name: string | undefined;
  /** Where a run that was cut off is found by the next one; without it, an upload resumes only within this call. */
  resumeStore: ResumeStore | undefined;
  onProgress: ((progress: Progress) => void) | undefined;
  /** Called once when the upload continues one that an earlier run left at `offset` bytes. */
  onResume: ((offset: number) => void) | undefined;
  /** How many failures in a row are resumed before the upload gives up (it stays resumable). */
  retries: number;
}

/** What the server answered to the PATCH that reached the end. */
interface Position {
  offset: number;
  fileId: string | null;
}

const TUS = { 'tus-resumable': '1.0.0' };

/**
 * Uploads through the server's tus endpoint (/api/uploads). A network error or a 5xx (or a 423 while the
 * server still finishes a cut-off request) makes it ask the server for the offset and continue from there,
 * with backoff, up to `retries` times in a row; progress never moves back. An abort leaves the upload on
 * the server (and in the store) for a later run. Answers the id of the File the upload became.
 */
export async function uploadResumable(transport: Transport, upload: ResumableUpload, options: RequestOptions): Promise<string> {
  const { source, resumeStore } = upload;
  const total = source.size!;
  const fingerprint = resumeStore && source.fingerprint ? fingerprintOf(source.fingerprint, upload.cutId) : undefined;
  let url = fingerprint ? await resumeStore!.get(fingerprint) : undefined;
  let position: Position = { offset: 0, fileId: null };
  if (url !== undefined) {
    try {
      position = await head(transport, url, options);
      if (position.offset > 0) upload.onResume?.(position.offset);
    } catch (error) {
      // Expired, terminated or another account's: start afresh.
      if (!(error instanceof BandApiError && error.status === 404)) throw error;
      url = undefined;
    }
  }
  if (url === undefined) {
    url = await create(transport, upload, total, options);
    if (fingerprint) await resumeStore!.set(fingerprint, url);
  }
  let reported = position.offset;
  const progress = (loaded: number) => {
    // Bytes sent but lost with a connection are sent again: the count holds still meanwhile.
    if (loaded <= reported) return;
    reported = loaded;
    upload.onProgress?.({ loaded, total });
  };
  for (let failures = 0; position.fileId === null; ) {
    try {
      position = await patch(transport, url, position.offset, source, progress, options);
      failures = 0;
    } catch (error) {
      if (options.signal?.aborted) throw error;
      if (!resumable(error) || failures >= upload.retries) throw error;
      await sleep(backoffMs(failures), undefined, { signal: options.signal });
      failures += 1;
      position = await head(transport, url, options).catch((headError: unknown) => {
        if (resumable(headError)) return position;
        throw headError;
      });
    }
  }
  if (fingerprint) await resumeStore!.remove(fingerprint);
  return position.fileId;
}

/**
 * Terminates a resumable upload: the server removes its bytes. Right after an abort the server may still be
 * saving what the cut-off request sent (423): that is waited out, with backoff.
 */
export async function cancelUpload(transport: Transport, url: string, options: RequestOptions = {}): Promise<void> {
  const retries = options.retries ?? transport.retries;
  for (let attempt = 0; ; attempt += 1) {
    try {
      const response = await transport.send({ method: 'DELETE', path: pathOf(transport, url), headers: TUS }, options);
      await response.body.dump();
      return;
    } catch (error) {
      if (!(error instanceof BandApiError && error.status === 423) || attempt >= retries) throw error;
      await sleep(backoffMs(attempt), undefined, { signal: options.signal });
    }
  }
}

function fingerprintOf(file: string, cutId: string): string {
  return createHash('sha256').update(`${file}\n${cutId}`).digest('hex');
}

/**
 * Worth asking for the offset and sending again: the connection broke, the server failed or was busy, the
 * offset moved (409), or the access token expired during a long upload (the HEAD refreshes it).
 */
function resumable(error: unknown): boolean {
  if (error instanceof BandNetworkError) return true;
  if (!(error instanceof BandApiError)) return false;
  return error.status >= 500 || error.status === 423 || error.status === 409 || error.code === 'TOKEN_EXPIRED';
}

async function create(transport: Transport, upload: ResumableUpload, total: number, options: RequestOptions): Promise<string> {
  const metadata = Object.entries({ cutId: upload.cutId, filename: upload.filename, name: upload.name })
    .filter(([, value]) => value !== undefined)
    .map(([key, value]) => `${key} ${Buffer.from(value!).toString('base64')}`)
    .join(',');
  const response = await transport.send(
    { method: 'POST', path: '/api/uploads', headers: { ...TUS, 'upload-length': String(total), 'upload-metadata': metadata } },
    options,
  );
  await response.body.dump();
  const location = header(response, 'location');
  if (!location) throw new BandNetworkError('The server created an upload without saying where (no Location)', { cause: null });
  return new URL(location, `${transport.baseUrl}/`).href;
}

async function head(transport: Transport, url: string, options: RequestOptions): Promise<Position> {
  const response = await transport.send({ method: 'HEAD', path: pathOf(transport, url), headers: TUS }, options);
  await response.body.dump();
  return positionOf(response);
}

async function patch(
  transport: Transport,
  url: string,
  offset: number,
  source: FileSource,
  progress: (loaded: number) => void,
  options: RequestOptions,
): Promise<Position> {
  const total = source.size!;
  const response = await transport.send(
    {
      method: 'PATCH',
      path: pathOf(transport, url),
      headers: { ...TUS, 'upload-offset': String(offset) },
      stream: {
        // Not sent again by the transport: after any failure the offset is asked for first.
        replayable: false,
        open: () => ({
          body: counted(source.openFrom!(offset), offset, progress),
          headers: { 'content-type': 'application/offset+octet-stream', 'content-length': String(total - offset) },
        }),
      },
    },
    options,
  );
  await response.body.dump();
  return positionOf(response);
}

function positionOf(response: StreamedResponse): Position {
  const offset = Number(header(response, 'upload-offset'));
  if (!Number.isSafeInteger(offset)) throw new BandNetworkError('The server answered without a valid Upload-Offset', { cause: null });
  return { offset, fileId: header(response, 'band-file-id') ?? null };
}

function header(response: StreamedResponse, name: string): string | undefined {
  const value = response.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** The upload's path on this client's server (the store keeps whole URLs). */
function pathOf(transport: Transport, url: string): string {
  const parsed = new URL(url, `${transport.baseUrl}/`);
  if (parsed.origin !== new URL(transport.baseUrl).origin) throw new TypeError(`${url} is not an upload of ${transport.baseUrl}`);
  return parsed.pathname;
}

/** The bytes from `start` on, counted for progress as they are pulled into the request. */
function counted(source: Readable, start: number, progress: (loaded: number) => void): Readable {
  let loaded = start;
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      loaded += chunk.length;
      progress(loaded);
      callback(null, chunk);
    },
  });
  return pipeline(source, counter, () => undefined);
}
