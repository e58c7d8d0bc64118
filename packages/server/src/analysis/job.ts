// Analyses and listening previews in a worker thread, started by ./isolated.ts: the decoders, parsers and the
// preview encoder run here, away from the server's event loop and under the thread's memory limits. The thread
// takes one request at a time and answers each with its outcome; it is ended when a file's time is up.
// A build entry of its own (tsup.config.ts): the thread loads dist/analysis/job.js.
import { createReadStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { setPriority } from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { parentPort, workerData } from 'node:worker_threads';
import type { Config } from '../core/config.js';
import type { Readable } from 'node:stream';
import { type BlobStore, createBlobStore, ObjectMissing, type ObjectSource, objectSource, storeKeys } from '../core/store/index.js';
import { DurationUnknown, encodePreview, type PreviewFacts } from './preview-encode.js';
import { analyzeAudio, type AudioFacts } from './analyze.js';
import type { WaveformData } from './peaks.js';
import { analyzeStems, openStemEntry, type StemsAnalysis } from './stems.js';

export type JobRequest = AnalysisRequest | PreviewRequest;

export interface AnalysisRequest {
  task: 'analysis';
  /** The stored object to analyse, in the thread's store. */
  key: string;
  type: 'CUT' | 'STEM';
  extension: string;
}

/**
 * A preview of the stored object `key`, stored at the file's preview key (§20); with `entry`, of that entry of
 * the STEM ZIP `key` (its position in the entry list), stored at the entry's preview key (PREVIEW_STEMS).
 */
export interface PreviewRequest {
  task: 'preview';
  fileId: string;
  key: string;
  /** The file's; an entry's is its path's. */
  extension: string;
  entry?: number;
  /** What analysis measured: it sizes the preview's index. Null before the analysis: the header's bound does. */
  durationMs: number | null;
}

/** What the thread is started with. */
export interface JobThreadData {
  /** The store the server's settings name, opened once by the thread for every file it analyses. */
  storage: Config['storage'];
  dataDir: string;
  /** Int32Array over a SharedArrayBuffer: 1 while an upload streams into the server, which the job gives way to. */
  uploading: Int32Array;
}

export type JobOutcome =
  | { status: 'audio'; audio: AudioFacts; peaks: WaveformData }
  | { status: 'stems'; stems: Extract<StemsAnalysis, { status: 'done' }>['stems'] }
  | { status: 'failed'; reason: string }
  | { status: 'unsupported' }
  | { status: 'preview'; preview: PreviewFacts }
  /** The stored bytes could not be read (deleted meanwhile, a disk error). */
  | { status: 'unreadable'; reason: string };

/**
 * While an upload streams in, the job takes at most a fifth of a core: after every BURST_MS of decoding it
 * rests four times as long as it worked, so the upload keeps its speed where cores are few.
 */
const BURST_MS = 10;
const REST_PER_WORK = 4;

function pacer(uploading: Int32Array): () => Promise<void> {
  let since = performance.now();
  return async () => {
    const worked = performance.now() - since;
    if (worked < BURST_MS) return;
    if (Atomics.load(uploading, 0) === 1) await new Promise((resolve) => setTimeout(resolve, worked * REST_PER_WORK));
    since = performance.now();
  };
}

async function run(request: JobRequest, { store, uploading }: { store: Promise<BlobStore>; uploading: Int32Array }): Promise<JobOutcome> {
  if (request.task === 'preview') return preview(request, { store, uploading });
  const { key, type, extension } = request;
  try {
    const source = await objectSource(await store, key);
    if (type === 'STEM') {
      const analysed = await analyzeStems(source);
      return analysed.status === 'done' ? { status: 'stems', stems: analysed.stems } : analysed;
    }
    const analysed = await analyzeAudio(source, extension, { pace: pacer(uploading) });
    return analysed.status === 'done' ? { status: 'audio', audio: analysed.audio, peaks: analysed.peaks } : analysed;
  } catch (error) {
    return { status: 'unreadable', reason: (error as Error).message };
  }
}

/**
 * Encodes the preview to a local file under DATA_DIR/tmp (the purge removes what a killed thread left there),
 * then stores it whole at the file's preview key, replacing an earlier one: a job run again overwrites its own key.
 */
async function preview(request: PreviewRequest, { store, uploading }: { store: Promise<BlobStore>; uploading: Int32Array }): Promise<JobOutcome> {
  const temp = path.join(dataDir, 'tmp', `preview-${request.fileId}-${randomUUID()}.m4a`);
  try {
    const stored = await store;
    const source = await objectSource(stored, request.key);
    await mkdir(path.dirname(temp), { recursive: true, mode: 0o700 });
    const options = { expectedDurationMs: request.durationMs, pace: pacer(uploading) };
    let outcome;
    if (request.entry === undefined) outcome = await encodePreview(source, request.extension, temp, options);
    else {
      const opened = await openZipEntry(source, request.entry);
      if (opened.status !== 'open') return opened;
      try {
        // The entry is inflated as it is read: no copy of it is stored.
        outcome = await encodePreview(opened.stream, opened.path.split('.').pop()!, temp, options);
      } finally {
        opened.stream.destroy();
      }
    }
    if (outcome.status !== 'done') return outcome;
    const key = request.entry === undefined ? storeKeys.preview(request.fileId) : storeKeys.entryPreview(request.fileId, request.entry);
    await stored.write(key, createReadStream(temp));
    return { status: 'preview', preview: outcome.preview };
  } catch (error) {
    if (error instanceof DurationUnknown) return { status: 'unsupported' };
    return { status: 'unreadable', reason: (error as Error).message };
  } finally {
    await rm(temp, { force: true });
  }
}

/**
 * A STEM ZIP's entry, open; `failed` when the ZIP does not list it or it cannot be inflated (encrypted, an
 * unknown method): the file's trouble. A store that cannot be read rejects: the server's.
 */
async function openZipEntry(source: ObjectSource, position: number): Promise<{ status: 'open'; path: string; stream: Readable } | { status: 'failed'; reason: string }> {
  let opened;
  try {
    opened = await openStemEntry(source, position);
  } catch (error) {
    if (error instanceof ObjectMissing || typeof (error as NodeJS.ErrnoException).code === 'string') throw error;
    return { status: 'failed', reason: `the entry could not be read: ${(error as Error).message}` };
  }
  return opened ? { status: 'open', ...opened } : { status: 'failed', reason: `the ZIP has no entry ${position}` };
}

/**
 * On Linux a nice value belongs to a thread, and `setPriority()` without a pid sets the calling one's: this
 * thread then takes the CPU only when the server's event loop does not want it, so requests served during a
 * backlog wait for no analysis (elsewhere the call would lower the whole server, so it is not made).
 */
const ANALYSIS_NICE = 19;
if (process.platform === 'linux') setPriority(ANALYSIS_NICE);

const { storage, dataDir, uploading } = workerData as JobThreadData;
const store = createBlobStore(storage, dataDir);
// A store that cannot be made answers each file unreadable (in run), not an unhandled rejection here.
store.catch(() => undefined);
// One request at a time: the caller sends the next only once this one is answered.
parentPort!.on('message', (request: JobRequest) => void run(request, { store, uploading }).then((outcome) => parentPort!.postMessage(outcome)));
