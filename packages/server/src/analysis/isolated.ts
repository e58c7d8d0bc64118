// Runs one analysis in a worker thread (./job.ts) with a memory limit and a wall-clock budget: a crafted file
// can cost that thread its budget, never the server's event loop or the process's memory.
import { Worker } from 'node:worker_threads';
import type { JobOutcome, JobRequest } from './job.js';

/**
 * The thread runs the built job, dist/analysis/job.js: the server's bundle (dist/main.js) finds it next to
 * itself; run from source (the tests, through vite), this module finds it in the package's dist, which
 * `pnpm build` makes.
 */
const JOB_SCRIPT = new URL(import.meta.url.endsWith('.ts') ? '../../dist/analysis/job.js' : './analysis/job.js', import.meta.url);

/**
 * The thread's JS heap. Decoded audio lives in typed arrays and wasm memories outside it; the decoders keep
 * those small by the size of the slices they are fed (./analyze.ts).
 */
const HEAP_LIMIT_MB = 256;
/** How often the thread learns whether an upload is streaming in (it rests then). */
const UPLOADING_REFRESH_MS = 50;

export interface ThreadBudget {
  timeoutMs: number;
  /** Whether an upload streams into the server now. */
  uploading: () => boolean;
  /** Ends the thread and rejects with the signal's reason. */
  signal: AbortSignal;
}

/**
 * The outcome of the file's analysis; a file over the budget (time or memory) is `failed`. Rejects when the
 * thread itself broke (it could not start, it crashed): the server's trouble, not the file's.
 */
export function analyzeInThread(request: Omit<JobRequest, 'uploading'>, { timeoutMs, uploading, signal }: ThreadBudget): Promise<JobOutcome> {
  signal.throwIfAborted();
  const flag = new Int32Array(new SharedArrayBuffer(4));
  const worker = new Worker(JOB_SCRIPT, {
    workerData: { ...request, uploading: flag } satisfies JobRequest,
    resourceLimits: { maxOldGenerationSizeMb: HEAP_LIMIT_MB },
  });
  return new Promise<JobOutcome>((resolve, reject) => {
    let settled = false;
    const settle = (end: () => void): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearInterval(refresh);
      signal.removeEventListener('abort', onAbort);
      // Resolved once the thread is gone, so a budget's end frees its memory before the next job starts.
      void worker.terminate().finally(end);
    };
    const onAbort = (): void => settle(() => reject(signal.reason));
    const timer = setTimeout(() => settle(() => resolve({ status: 'failed', reason: `over the time budget of ${timeoutMs / 1000} s` })), timeoutMs);
    const refresh = setInterval(() => Atomics.store(flag, 0, uploading() ? 1 : 0), UPLOADING_REFRESH_MS);
    signal.addEventListener('abort', onAbort, { once: true });
    worker.once('message', (outcome: JobOutcome) => settle(() => resolve(outcome)));
    worker.once('error', (error: Error & { code?: string }) =>
      settle(() =>
        error.code === 'ERR_WORKER_OUT_OF_MEMORY' ? resolve({ status: 'failed', reason: `over the memory budget of ${HEAP_LIMIT_MB} MiB` }) : reject(error),
      ),
    );
    worker.once('exit', (code) => settle(() => reject(new Error(`the analysis thread exited with ${code} before it answered`))));
  });
}
