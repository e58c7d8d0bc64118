// The kinds of background work on the one job queue (./jobs.ts), each with its payload's type and its
// retry schedule. A kind's handler lives with its feature and is registered in app.ts; its concurrency per
// instance is the setting JOBS_CONCURRENCY_<KIND> (./config.ts).

/** How a failed attempt is retried: exponential backoff from `firstSeconds`, at most `capSeconds`, with jitter. */
export interface RetrySchedule {
  firstSeconds: number;
  capSeconds: number;
}

export interface JobKind<Payload> {
  name: string;
  /** Attempts (runs started) before a job is `failed`. */
  maxAttempts: number;
  retry: RetrySchedule;
  /** Taken round-robin by the jobs' `fairKey` (one uploader's many files never starve another's one). */
  fair: boolean;
  /** Types the payload only: never read at run time. */
  readonly payload?: Payload;
}

function kind<Payload>(name: string, options: Partial<Omit<JobKind<Payload>, 'name' | 'payload'>> = {}): JobKind<Payload> {
  return { name, maxAttempts: 5, retry: { firstSeconds: 10, capSeconds: 3600 }, fair: false, ...options };
}

/** No payload: the work is whatever is due when it runs (purges, digests). */
type Due = Record<string, never>;

export const JOB_KINDS = {
  /**
   * One file's audio analysis (§12): three attempts about 30 s apart, as before the queue existed (a database
   * restart is over by then); the handler fails the file on its last one.
   */
  analysis: kind<{ fileId: string }>('analysis', { maxAttempts: 3, retry: { firstSeconds: 30, capSeconds: 30 }, fair: true }),
  /** A listening preview of one file (§20). */
  preview: kind<{ fileId: string }>('preview', { maxAttempts: 3, fair: true }),
  /** One webhook's delivery of one event (§19): the same `webhook-id` on every attempt. */
  webhook_delivery: kind<{ webhookId: string; eventId: string }>('webhook_delivery', { maxAttempts: 8 }),
  /** One email (§19): the same `Message-ID` on every attempt. */
  email: kind<{ messageId: string }>('email', { maxAttempts: 8 }),
  /** The notification digests due (§19). */
  digest: kind<Due>('digest'),
  /** Trash past its retention deleted for good (§21). */
  trash_purge: kind<Due>('trash_purge'),
  /** Expired resumable uploads removed, with their stored parts. */
  upload_purge: kind<Due>('upload_purge'),
  /** Expired rows, day-old leftovers of interrupted storing (operations/purge.ts). */
  expired_rows_purge: kind<Due>('expired_rows_purge'),
} as const;

export type JobKindName = keyof typeof JOB_KINDS;
export type PayloadOf<K extends JobKind<unknown>> = K extends JobKind<infer P> ? P : never;

/**
 * The wait before the attempt after `attempt` (1 for the first run): firstSeconds × 2^(attempt−1), at most
 * capSeconds, less up to a quarter at random (jitter, so jobs failed together do not all return together).
 */
export function retryDelaySeconds(schedule: RetrySchedule, attempt: number, random: number): number {
  const full = Math.min(schedule.capSeconds, schedule.firstSeconds * 2 ** (attempt - 1));
  return full * (1 - 0.25 * random);
}
