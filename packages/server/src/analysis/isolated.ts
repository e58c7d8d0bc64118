// Runs analyses in a worker thread (./job.ts) with a memory limit and a wall-clock budget per file: a crafted
// file can cost that thread its budget, never the server's event loop or the process's memory. The thread
// analyses one file after another and is only replaced when a budget ends it (or it breaks), so a backlog
// pays neither a thread start nor the decoders' wasm instances per file (./decoders.ts keeps them).
import { Worker } from 'node:worker_threads';
import type { Config } from '../core/config.js';
import type { JobOutcome, JobRequest, JobThreadData } from './job.js';

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

/**
 * A file's time budget grows with its size, from a floor up to ANALYSIS_TIMEOUT_SECONDS: real audio analyses
 * at several MiB a second on one core here (FLAC, the slowest, included; a fifth of that while an upload streams
 * in), so 2 s a MiB leaves a loaded machine room, while a small crafted file (a 900 KB FLAC decoding to hours)
 * no longer holds its slot for the whole cap. The floor is for the fixed costs a loaded machine stretches at
 * nice 19 (a thread's start, the decoders' wasm) and for a STEM ZIP's entries, whose reads do not grow with
 * its bytes (10,000 tiny entries are a small file); a bomb is stopped sooner by its samples per byte (./analyze.ts).
 */
const BUDGET_SECONDS_PER_MIB = 2;
const BUDGET_FLOOR_SECONDS = 60;
const MiB = 1024 * 1024;

export function analysisBudgetSeconds(size: number, capSeconds: number): number {
  return Math.min(capSeconds, Math.max(BUDGET_FLOOR_SECONDS, Math.ceil((size / MiB) * BUDGET_SECONDS_PER_MIB)));
}

export interface ThreadBudget {
  timeoutMs: number;
  /** Whether an upload streams into the server now. */
  uploading: () => boolean;
  /** Ends the thread and rejects with the signal's reason. */
  signal: AbortSignal;
}

/** One analysis thread, for one caller at a time (a loop of the queue's consumer). */
export class AnalysisThread {
  private worker: Worker | null = null;
  /** 1 while an upload streams into the server, which the job gives way to. */
  private readonly uploadingFlag = new Int32Array(new SharedArrayBuffer(4));

  /** `storage` and `dataDir` name the store the thread reads the files from (the server's). */
  constructor(private readonly store: { storage: Config['storage']; dataDir: string }) {}

  /**
   * The outcome of the file's analysis; a file over the budget (time or memory) is `failed`. Rejects when the
   * thread itself broke (it could not start, it crashed): the server's trouble, not the file's.
   */
  analyze(request: JobRequest, { timeoutMs, uploading, signal }: ThreadBudget): Promise<JobOutcome> {
    signal.throwIfAborted();
    const worker = (this.worker ??= this.spawn());
    const flag = this.uploadingFlag;
    return new Promise<JobOutcome>((resolve, reject) => {
      let settled = false;
      const settle = (end: () => void, { endThread }: { endThread: boolean }): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        clearInterval(refresh);
        signal.removeEventListener('abort', onAbort);
        worker.off('message', onMessage).off('error', onError).off('exit', onExit);
        if (!endThread) return end();
        if (this.worker === worker) this.worker = null;
        // Resolved once the thread is gone, so a budget's end frees its memory before the next job starts.
        void worker.terminate().finally(end);
      };
      const onAbort = (): void => settle(() => reject(signal.reason), { endThread: true });
      const onMessage = (outcome: JobOutcome): void => settle(() => resolve(outcome), { endThread: false });
      const onError = (error: Error & { code?: string }): void =>
        settle(
          () =>
            error.code === 'ERR_WORKER_OUT_OF_MEMORY' ? resolve({ status: 'failed', reason: `over the memory budget of ${HEAP_LIMIT_MB} MiB` }) : reject(error),
          { endThread: true },
        );
      const onExit = (code: number): void =>
        settle(() => reject(new Error(`the analysis thread exited with ${code} before it answered`)), { endThread: true });
      const timer = setTimeout(
        () => settle(() => resolve({ status: 'failed', reason: `over the time budget of ${timeoutMs / 1000} s` }), { endThread: true }),
        timeoutMs,
      );
      Atomics.store(flag, 0, uploading() ? 1 : 0);
      const refresh = setInterval(() => Atomics.store(flag, 0, uploading() ? 1 : 0), UPLOADING_REFRESH_MS);
      signal.addEventListener('abort', onAbort, { once: true });
      worker.on('message', onMessage).on('error', onError).on('exit', onExit);
      worker.postMessage(request);
    });
  }

  /** Ends the thread, if one runs. */
  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = null;
    await worker?.terminate();
  }

  private spawn(): Worker {
    const worker = new Worker(JOB_SCRIPT, {
      workerData: { ...this.store, uploading: this.uploadingFlag } satisfies JobThreadData,
      resourceLimits: { maxOldGenerationSizeMb: HEAP_LIMIT_MB },
    });
    // An idle thread does not keep the process alive; close() ends it at a stop.
    worker.unref();
    return worker;
  }
}
