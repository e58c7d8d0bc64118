import { createHash, randomUUID } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Readable, Transform, pipeline } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import type { WithResponse } from './band-promise.js';
import { ROUTES } from './contract/routes.js';
import { abortedOr, BandApiError, BandNetworkError } from './errors.js';
import type { PreparedUpload } from './transfer.js';
import { backoffMs, joinedSignal, type RequestOptions, routeRequest, single, type StreamedResponse, type Transport } from './transport.js';
import type { FileRecord } from './types.js';
import type { FileSource } from './upload-source.js';

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

/** The server forgets an incomplete upload this long after its last bytes; a store entry older than that is dead. */
const UPLOAD_LIFETIME_MS = 24 * 60 * 60 * 1000;

/** An entry as this version writes it; earlier versions wrote the URL alone. */
interface StoredUpload {
  url: string;
  /** When the entry was last written (ms since the epoch). */
  writtenAt: number;
}

type StoredEntry = StoredUpload | string;

/**
 * A ResumeStore in one JSON file (mode 0600, in a 0700 directory), written whole and renamed into place so a
 * reader never sees half of it. Within a process, changes to one file (parallel uploads) run one after
 * another, whichever instance makes them. Two processes writing at once may lose one's entry: that upload
 * then starts again from its first byte, nothing worse. Every write drops entries last written longer ago
 * than the server keeps an incomplete upload, so uploads never run again do not stay forever.
 */
export class FileResumeStore implements ResumeStore {
  constructor(readonly filePath: string) {}

  async get(fingerprint: string): Promise<string | undefined> {
    const entry = (await this.read())[fingerprint];
    return typeof entry === 'string' ? entry : entry?.url;
  }

  set(fingerprint: string, uploadUrl: string): Promise<void> {
    return this.change((entries) => ({ ...entries, [fingerprint]: { url: uploadUrl, writtenAt: Date.now() } }));
  }

  remove(fingerprint: string): Promise<void> {
    return this.change((entries) => {
      if (!(fingerprint in entries)) return null;
      const { [fingerprint]: _removed, ...rest } = entries;
      return rest;
    });
  }

  /** Reads, changes and writes the file, after the changes queued before; `edit` answers null for no change. */
  private change(edit: (entries: Record<string, StoredEntry>) => Record<string, StoredEntry> | null): Promise<void> {
    const previous = fileQueues.get(this.filePath) ?? Promise.resolve();
    const next = previous
      .catch(() => undefined)
      .then(async () => {
        const changed = edit(await this.read());
        if (changed) await this.write(withoutStale(changed));
      });
    fileQueues.set(this.filePath, next);
    void next.finally(() => {
      if (fileQueues.get(this.filePath) === next) fileQueues.delete(this.filePath);
    }).catch(() => undefined);
    return next;
  }

  private async read(): Promise<Record<string, StoredEntry>> {
    try {
      const parsed: unknown = JSON.parse(await readFile(this.filePath, 'utf8'));
      return parsed !== null && typeof parsed === 'object' ? (parsed as Record<string, StoredEntry>) : {};
    } catch (error) {
      // Absent (nothing to resume) or unreadable (a torn write of an older version): start afresh.
      if ((error as NodeJS.ErrnoException).code === 'ENOENT' || error instanceof SyntaxError) return {};
      throw error;
    }
  }

  private async write(entries: Record<string, StoredEntry>): Promise<void> {
    await mkdir(path.dirname(this.filePath), { recursive: true, mode: 0o700 });
    const temp = `${this.filePath}.${randomUUID()}.tmp`;
    await writeFile(temp, JSON.stringify(entries, null, 2), { mode: 0o600 });
    await rename(temp, this.filePath);
  }
}

/**
 * The entries the server may still know. An entry of an earlier version (the URL alone) counts as written
 * now: it may belong to an upload from the last hours, still resumable, and a URL the server has forgotten
 * costs one HEAD (404, then a fresh start); it gets a time when written again, so it goes within a day.
 */
function withoutStale(entries: Record<string, StoredEntry>): Record<string, StoredUpload> {
  const now = Date.now();
  const kept: Record<string, StoredUpload> = {};
  for (const [fingerprint, entry] of Object.entries(entries)) {
    const stored = typeof entry === 'string' ? { url: entry, writtenAt: now } : entry;
    if (now - stored.writtenAt <= UPLOAD_LIFETIME_MS) kept[fingerprint] = stored;
  }
  return kept;
}

/** Files of at least this size go through a resumable upload when `resumable` is 'auto'. */
export const RESUMABLE_MIN_BYTES = 8 * 1024 * 1024;

/** An upload's options for the server's resumable (tus) uploads (the Node build's: the web build has none). */
export interface ResumableOptions {
  /**
   * Through the server's resumable (tus) uploads: 'auto' (the default) for files of `resumableMinBytes` and more
   * whose bytes can be read again (a path in Node, bytes, a Blob); true for any such file; false never.
   */
  resumable?: boolean | 'auto';
  /** The size from which 'auto' uploads resumably; 8 MiB by default. */
  resumableMinBytes?: number;
  /**
   * Remembers unfinished resumable uploads of file paths, so a later run (another process) continues one
   * instead of starting again (without it, an upload resumes only within its call); `FileResumeStore` keeps them
   * in a file.
   */
  resumeStore?: ResumeStore;
  /** Called when a resumable upload continues one an earlier run left at `offset` bytes. */
  onResume?: (offset: number) => void;
}

/** An upload as upload.ts prepared it, with the options of its resumable sending and its signal. */
export type ResumableUpload = PreparedUpload<FileSource> & ResumableOptions & { signal?: AbortSignal };

/**
 * Sends an upload through the server's resumable uploads (uploadResumable), then reads the File it became: the
 * record, with the response of that read beside it.
 */
export async function sendResumable(transport: Transport, upload: ResumableUpload, options?: RequestOptions): Promise<WithResponse<FileRecord>> {
  const signal = joinedSignal(upload.signal, options?.signal);
  const fileId = await uploadResumable(transport, upload, { ...options, signal });
  return transport.call(ROUTES.getFile, { params: { id: fileId } }, { ...options, signal }).withResponse();
}

/** What the server answered to the PATCH that reached the end. */
interface Position {
  offset: number;
  fileId: string | null;
}

const TUS = { 'tus-resumable': '1.0.0' };

/**
 * How long 423s in a row are waited out. After a PATCH is cut off the server holds the upload's lock while it
 * saves what arrived (fsync, offset), which can take longer than `retries` quick retries last; the server
 * forgets nothing meanwhile, so waiting is cheap and giving up early would fail an upload that was fine.
 */
const LOCK_PATIENCE_MS = 30_000;
/** The longest pause between two tries while the lock is held (unless the server's Retry-After asks for more). */
const LOCK_BACKOFF_CAP_MS = 2_000;

/**
 * How an upload is sent, decided once for every upload (upload.ts asks): 'tus', the server's resumable uploads,
 * when `resumable` is true, or 'auto' (the default) for a file of `resumableMinBytes` and more whose bytes can be
 * read again from an offset (a path, bytes, a Blob); else 'form', one multipart request.
 */
export function protocolFor(source: FileSource, options: ResumableOptions): 'form' | 'tus' {
  const mode = options.resumable ?? 'auto';
  const possible = source.size !== null && source.size > 0 && source.openFrom !== undefined;
  if (mode === true && !possible) throw new TypeError('upload: a resumable upload needs a path, bytes or a Blob (a stream cannot be read again)');
  const resumable = mode === 'auto' ? possible && source.size! >= (options.resumableMinBytes ?? RESUMABLE_MIN_BYTES) : mode;
  return resumable ? 'tus' : 'form';
}

/**
 * Uploads through the server's tus endpoint (/api/uploads). A network error, a 5xx or a 409 makes it ask
 * the server for the offset and continue from there, with backoff, up to the call's (else the client's)
 * `retries` times in a row, after which it gives up (the upload stays resumable); a 423
 * (another request holds the upload) or a 429 (the user's other uploads take every slot) is waited out apart
 * from those, for up to LOCK_PATIENCE_MS. Progress
 * never moves back. An abort leaves the upload on the server (and in the store) for a later run. Answers
 * the id of the File the upload became.
 */
async function uploadResumable(transport: Transport, upload: ResumableUpload, options: RequestOptions): Promise<string> {
  const { source, resumeStore } = upload;
  const total = source.size!;
  const fingerprint = resumeStore && source.fingerprint ? fingerprintOf(source.fingerprint, destinationOf(upload)) : undefined;
  let url = fingerprint ? await resumeStore!.get(fingerprint) : undefined;
  let position: Position = { offset: 0, fileId: null };
  const patience = new LockPatience(options.signal);
  const retries = options.retries ?? transport.retries;
  if (url !== undefined) {
    try {
      // The run that stored the URL may have been stopped a moment ago, its PATCH still being saved.
      position = await resumePoint(transport, url, patience, options);
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
      if (busy(error)) await patience.wait(error);
      else {
        if (!resumable(error) || failures >= retries) throw error;
        await pause(backoffMs(failures), options.signal);
        failures += 1;
      }
      position = await resumePoint(transport, url, patience, options).catch((headError: unknown) => {
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
 * saving what the cut-off request sent (423): that is waited out, for up to LOCK_PATIENCE_MS.
 */
export async function cancelUpload(transport: Transport, url: string, options: RequestOptions = {}): Promise<void> {
  await untilUnlocked(new LockPatience(options.signal), async () => {
    const response = await transport.send({ method: ROUTES.tusTerminate.method, path: uploadPath(transport, url), headers: TUS }, options);
    await response.body.dump();
  });
}

/**
 * The pauses of one series of 423s: the server's Retry-After when it sends one, else a backoff capped at
 * LOCK_BACKOFF_CAP_MS, until the series has lasted LOCK_PATIENCE_MS. A signal ends a pause at once.
 */
class LockPatience {
  private startedAt: number | null = null;
  private pauses = 0;

  constructor(private readonly signal: AbortSignal | undefined) {}

  /** Pauses before the next try, or throws `error` when the pause would end past the patience. */
  async wait(error: unknown): Promise<void> {
    this.startedAt ??= Date.now();
    const retryAfter = error instanceof BandApiError ? error.retryAfter : null;
    const ms = retryAfter !== null ? retryAfter * 1000 : Math.min(LOCK_BACKOFF_CAP_MS, backoffMs(this.pauses));
    if (Date.now() + ms - this.startedAt > LOCK_PATIENCE_MS) throw error;
    this.pauses += 1;
    await pause(ms, this.signal);
  }

  /** The lock was found free: a later 423 starts a new series. */
  reset(): void {
    this.startedAt = null;
    this.pauses = 0;
  }
}

/** Runs `request` again after each 423, as `patience` allows. */
async function untilUnlocked<T>(patience: LockPatience, request: () => Promise<T>): Promise<T> {
  for (;;) {
    try {
      return await request();
    } catch (error) {
      if (!busy(error)) throw error;
      await patience.wait(error);
    }
  }
}

/**
 * Where to continue: the offset (HEAD), once no other request holds the upload's lock. A PATCH refused with
 * 423 gets its connection closed while its body is still being sent, which reaches the client as a broken
 * connection more often than as the 423. An empty PATCH at the offset has no body to be cut off: it answers
 * 423 while the lock is held (waited out), 409 when the holder saved more meanwhile (asked again), and 204
 * once the upload is free at that offset. When that check itself fails otherwise (a 503 for too many locked
 * uploads, a broken connection), the HEAD's offset is the answer: the PATCH with the bytes finds out.
 */
async function resumePoint(transport: Transport, url: string, patience: LockPatience, options: RequestOptions): Promise<Position> {
  for (;;) {
    const position = await untilUnlocked(patience, () => head(transport, url, options));
    if (position.fileId !== null) return position;
    try {
      const free = await emptyPatch(transport, url, position.offset, options);
      patience.reset();
      return free;
    } catch (error) {
      if (busy(error) || (error instanceof BandApiError && error.status === 409)) await patience.wait(error);
      else if (resumable(error) && !options.signal?.aborted) return position;
      else throw error;
    }
  }
}

/** Sleeps `ms`; an abort rejects with a BandAbortError, as the requests do. */
async function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  try {
    await sleep(ms, undefined, { signal });
  } catch (error) {
    throw abortedOr(error, signal);
  }
}

function fingerprintOf(file: string, destination: string): string {
  return createHash('sha256').update(`${file}\n${destination}`).digest('hex');
}

/** Where an upload goes: its series or cut, and its path when it has one (one file pushed to two paths is two uploads). */
function destinationOf(upload: ResumableUpload): string {
  const { versionOf, cutId, path } = upload.fields;
  const target = versionOf ?? cutId ?? '';
  return path === undefined ? target : `${target}\n${path}`;
}

/**
 * Worth asking for the offset and sending again: the connection broke, the server failed or was busy, the
 * offset moved (409), or the access token expired during a long upload (the HEAD refreshes it).
 */
function resumable(error: unknown): boolean {
  if (error instanceof BandNetworkError) return true;
  if (!(error instanceof BandApiError)) return false;
  // Not every 409: PATH_TAKEN on the completing PATCH ends the upload.
  return error.status >= 500 || error.code === 'OFFSET_MISMATCH' || error.code === 'TOKEN_EXPIRED';
}

/**
 * Waited out: 423 UPLOAD_LOCKED (another request is sending bytes to the upload, or the server still saves a
 * cut-off one), and 429 on a PATCH (as many of the user's uploads as the server takes at once are receiving bytes).
 */
function busy(error: unknown): error is BandApiError {
  return error instanceof BandApiError && (error.status === 423 || error.status === 429);
}

async function create(transport: Transport, upload: ResumableUpload, total: number, options: RequestOptions): Promise<string> {
  const { cutId, versionOf, name, path } = upload.fields;
  const metadata = Object.entries({ cutId, versionOf, filename: upload.filename, name, path })
    .filter(([, value]) => value !== undefined)
    .map(([key, value]) => `${key} ${Buffer.from(value!).toString('base64')}`)
    .join(',');
  // A create: sent with an Idempotency-Key, so a creation whose answer was lost is answered again, not made twice.
  const response = await transport.send(
    routeRequest(ROUTES.tusCreate, {
      headers: {
        ...TUS,
        'upload-length': String(total),
        'upload-metadata': metadata,
        ...(upload.ifNoneMatch === undefined ? {} : { 'if-none-match': `"${upload.ifNoneMatch}"` }),
      },
    }),
    options,
  );
  await response.body.dump();
  const location = header(response, 'location');
  if (!location) throw new BandNetworkError('The server created an upload without saying where (no Location)', { cause: null });
  return new URL(location, `${transport.baseUrl}/`).href;
}

async function head(transport: Transport, url: string, options: RequestOptions): Promise<Position> {
  const response = await transport.send({ method: ROUTES.tusStatus.method, path: uploadPath(transport, url), headers: TUS }, options);
  await response.body.dump();
  return positionOf(response);
}

/** Sends the source's bytes from `offset` on; the transport never sends them again (after any failure the offset is asked for first). */
function patch(
  transport: Transport,
  url: string,
  offset: number,
  source: FileSource,
  progress: (loaded: number) => void,
  options: RequestOptions,
): Promise<Position> {
  const bytes = () => counted(source.openFrom!(offset), offset, progress);
  return patchAt(transport, url, offset, { length: source.size! - offset, open: bytes, reopenable: () => false }, options);
}

/** A PATCH without bytes: the offset confirmed, and the lock free (see resumePoint). */
function emptyPatch(transport: Transport, url: string, offset: number, options: RequestOptions): Promise<Position> {
  return patchAt(transport, url, offset, { length: 0, open: () => Readable.from([]), reopenable: () => true }, options);
}

async function patchAt(
  transport: Transport,
  url: string,
  offset: number,
  body: { length: number; open: () => Readable; reopenable: () => boolean },
  options: RequestOptions,
): Promise<Position> {
  const response = await transport.send(
    {
      method: ROUTES.tusPatch.method,
      path: uploadPath(transport, url),
      headers: { ...TUS, 'upload-offset': String(offset) },
      stream: {
        reopenable: body.reopenable,
        open: () => ({
          body: body.open(),
          headers: { 'content-type': 'application/offset+octet-stream', 'content-length': String(body.length) },
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
  return single(response.headers[name]);
}

/** The upload's path on this client's server (the store keeps whole URLs, from the Location of their creation). */
function uploadPath(transport: Transport, url: string): string {
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
