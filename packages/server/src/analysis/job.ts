// One analysis in a worker thread, started by ./isolated.ts: the decoders and parsers run here, away from
// the server's event loop and under the thread's memory limits, and the thread is ended when its time is up.
// A build entry of its own (tsup.config.ts): the thread loads dist/analysis/job.js.
import { parentPort, workerData } from 'node:worker_threads';
import type { Config } from '../core/config.js';
import { createBlobStore, objectSource } from '../core/store/index.js';
import { analyzeAudio, type AudioFacts } from './analyze.js';
import type { WaveformData } from './peaks.js';
import { analyzeStems, type StemsAnalysis } from './stems.js';

export interface JobRequest {
  /** The stored object to analyse, in the store the server's settings name. */
  key: string;
  storage: Config['storage'];
  dataDir: string;
  type: 'CUT' | 'STEM';
  extension: string;
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

async function run({ key, storage, dataDir, type, extension, uploading }: JobRequest): Promise<JobOutcome> {
  try {
    const source = await objectSource(await createBlobStore(storage, dataDir), key);
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

parentPort!.postMessage(await run(workerData as JobRequest));
