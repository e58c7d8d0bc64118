// Analyses in a worker thread, started by ./isolated.ts: the decoders and parsers run here, away from the
// server's event loop and under the thread's memory limits. The thread takes one request at a time and
// answers each with its outcome; it is ended when a file's time is up.
// A build entry of its own (tsup.config.ts): the thread loads dist/analysis/job.js.
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import type { Config } from '../core/config.js';
import { type BlobStore, createBlobStore, objectSource } from '../core/store/index.js';
import { analyzeAudio, type AudioFacts } from './analyze.js';
import type { WaveformData } from './peaks.js';
import { analyzeStems, type StemsAnalysis } from './stems.js';

export interface JobRequest {
  /** The stored object to analyse, in the thread's store. */
  key: string;
  type: 'CUT' | 'STEM';
  extension: string;
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

async function run({ key, type, extension }: JobRequest, { store, uploading }: { store: Promise<BlobStore>; uploading: Int32Array }): Promise<JobOutcome> {
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
