// The job queue's runtime (§18): every instance runs the kinds registered on it, each up to its concurrency.
// A job is claimed in a short transaction (./jobs-repository.ts) and run holding no database connection,
// under a lease this instance renews every HEARTBEAT_SECONDS. While the instance lives it holds an advisory
// lock of its own (on the `locks` connection, outside the pool); when it dies (kill -9) its session ends and
// the lock with it, and any instance's next sweep (every SWEEP_SECONDS) queues its jobs again. A lease that
// runs out (an instance cut off from the database) frees its jobs too, LEASE_SECONDS after the last renewal:
// a killed instance's job starts again elsewhere within SWEEP_SECONDS, a cut-off one's within
// LEASE_SECONDS + SWEEP_SECONDS (25 s), inside the contract's 30 s. Instances wake on NOTIFY as a job commits,
// and poll every POLL_SECONDS besides (retries coming due, a missed notification).
import { randomInt } from 'node:crypto';
import type { Clock } from './clock.js';
import { type JobKind, retryDelaySeconds } from './job-kinds.js';
import { JOBS_CHANNEL, JobsRepository } from './jobs-repository.js';
import type { Logger } from './logger.js';
import type { Sql } from './sql.js';

const LEASE_SECONDS = 20;
const HEARTBEAT_SECONDS = 5;
const SWEEP_SECONDS = 5;
const POLL_SECONDS = 1;
/** Done and failed jobs past their retention are deleted this often. */
const PURGE_FINISHED_SECONDS = 600;

export interface JobRun<P> {
  id: string;
  payload: P;
  /** 1 for the first run. */
  attempt: number;
  maxAttempts: number;
  /** Aborted when the instance stops: the job is then queued again, this attempt not counted. */
  signal: AbortSignal;
}

/** Runs one job; a throw is a failed attempt (retried with backoff, `failed` once its attempts are spent). */
export type JobHandler<P> = (run: JobRun<P>) => Promise<void>;

interface Registered {
  kind: JobKind<unknown>;
  handler: JobHandler<unknown>;
  concurrency: number;
  running: number;
  /** A claim is under way; `again` asks for another once it ends. */
  claiming: boolean;
  again: boolean;
}

export interface JobQueueDeps {
  sql: Sql;
  /** A connection of its own, outside the pool, which holds the instance's advisory lock. */
  locks: Sql;
  log: Logger;
  /** What `runAt` and the retry schedule are reckoned in; leases in the database's own time. */
  clock: Clock;
}

export class JobQueue {
  private readonly repository: JobsRepository;
  private readonly kinds = new Map<string, Registered>();
  private readonly schedules = new Map<string, { kind: JobKind<unknown>; seconds: number }>();
  /** The jobs running here, by id. */
  private readonly running = new Map<string, Promise<void>>();
  private readonly controller = new AbortController();
  private readonly timers: NodeJS.Timeout[] = [];
  private unlisten: (() => Promise<void>) | null = null;
  /** This instance's advisory-lock key, written on the jobs it runs. */
  private lockedBy = 0;
  private started = false;

  constructor(private readonly deps: JobQueueDeps) {
    this.repository = new JobsRepository(deps.sql);
  }

  /** Runs `kind`'s jobs on this instance, `concurrency` at once (0: none here). Before start. */
  register<P>(kind: JobKind<P>, handler: JobHandler<P>, { concurrency }: { concurrency: number }): void {
    if (this.started) throw new Error('register job kinds before the queue starts');
    this.kinds.set(kind.name, { kind, handler: handler as JobHandler<unknown>, concurrency, running: 0, claiming: false, again: false });
  }

  /** Enqueues a job of `kind` every `seconds`, one run per period across every instance. Before start. */
  every(kind: JobKind<Record<string, never>>, seconds: number): void {
    if (this.started) throw new Error('schedule recurring jobs before the queue starts');
    this.schedules.set(kind.name, { kind, seconds });
  }

  async start(): Promise<void> {
    this.started = true;
    for (;;) {
      this.lockedBy = randomInt(1, 2 ** 31 - 1);
      if (await this.repository.holdInstanceLock(this.deps.locks, this.lockedBy)) break;
    }
    const now = this.now();
    for (const name of this.schedules.keys()) await this.repository.schedule(name, now);
    const listened = await this.deps.sql.listen(JOBS_CHANNEL, (kind) => this.wake(kind));
    this.unlisten = listened.unlisten;
    this.repeat(POLL_SECONDS, () => this.poll());
    this.repeat(HEARTBEAT_SECONDS, () => this.heartbeat());
    this.repeat(SWEEP_SECONDS, () => this.sweep());
    this.repeat(PURGE_FINISHED_SECONDS, () => this.repository.purgeFinished().then(() => undefined));
    await this.poll();
  }

  /**
   * Stops claiming, aborts the jobs running here and waits for their handlers, then queues the ones that did
   * not end again (their attempt not counted), so the next instance to look takes them at once.
   */
  async stop(): Promise<void> {
    if (!this.started) return;
    this.controller.abort();
    for (const timer of this.timers) clearInterval(timer);
    await this.unlisten?.().catch(() => undefined);
    await Promise.all(this.running.values());
  }

  private now(): Date {
    return new Date(this.deps.clock.now());
  }

  private repeat(seconds: number, task: () => Promise<void>): void {
    let busy = false;
    const timer = setInterval(() => {
      if (busy || this.controller.signal.aborted) return;
      busy = true;
      task()
        .catch((error: unknown) => this.deps.log.warn('job queue: a periodic task failed; it runs again shortly', { error }))
        .finally(() => (busy = false));
    }, seconds * 1000);
    timer.unref();
    this.timers.push(timer);
  }

  private active(): Registered[] {
    return [...this.kinds.values()].filter((registered) => registered.concurrency > 0);
  }

  private async poll(): Promise<void> {
    if (this.controller.signal.aborted) return;
    if (this.schedules.size > 0) await this.repository.enqueueDue([...this.schedules.values()], this.now());
    const idle = this.active().filter((registered) => registered.running < registered.concurrency);
    if (idle.length === 0) return;
    for (const kind of await this.repository.dueKinds(idle.map((registered) => registered.kind.name), this.now())) this.wake(kind);
  }

  private async heartbeat(): Promise<void> {
    if (!(await this.repository.holdInstanceLock(this.deps.locks, this.lockedBy))) {
      // Another instance drew the same key while this one's lock was lost (its connection broke): a new one.
      this.deps.log.warn('job queue: the instance lock was taken by another instance');
    }
    if (this.running.size > 0) await this.repository.renew([...this.running.keys()], this.lockedBy, LEASE_SECONDS);
  }

  private async sweep(): Promise<void> {
    for (const kind of new Set(await this.repository.reclaim())) this.wake(kind);
  }

  /** Claims what `kind` has room for; one claim at a time per kind, another after it when asked meanwhile. */
  private wake(kind: string): void {
    const registered = this.kinds.get(kind);
    if (!registered || registered.concurrency === 0 || this.controller.signal.aborted) return;
    if (registered.claiming) {
      registered.again = true;
      return;
    }
    const room = registered.concurrency - registered.running;
    if (room <= 0) return;
    registered.claiming = true;
    registered.again = false;
    this.repository
      .claim(registered.kind, room, { lockedBy: this.lockedBy, now: this.now(), leaseSeconds: LEASE_SECONDS })
      .then((jobs) => {
        for (const job of jobs) this.run(registered, job);
        // A full claim may have left more behind.
        if (jobs.length === room) registered.again = true;
      })
      .catch((error: unknown) => {
        if (!this.controller.signal.aborted) this.deps.log.warn('job queue: jobs could not be claimed; polling tries again', { kind, error });
      })
      .finally(() => {
        registered.claiming = false;
        if (registered.again) this.wake(kind);
      });
  }

  private run(registered: Registered, job: { id: string; payload: unknown; attempts: number; maxAttempts: number }): void {
    registered.running += 1;
    const { signal } = this.controller;
    const done = (async () => {
      try {
        await registered.handler({ id: job.id, payload: job.payload, attempt: job.attempts, maxAttempts: job.maxAttempts, signal });
        await this.repository.finish(job.id, this.lockedBy);
      } catch (error) {
        if (signal.aborted) {
          await this.repository.release([job.id], this.lockedBy).catch(() => undefined);
          return;
        }
        await this.failed(registered.kind, job, error);
      }
    })()
      .catch((error: unknown) => this.deps.log.warn('job queue: a job\'s end could not be recorded; its lease will run out', { jobId: job.id, error }))
      .finally(() => {
        this.running.delete(job.id);
        registered.running -= 1;
        this.wake(registered.kind.name);
      });
    this.running.set(job.id, done);
  }

  private async failed(kind: JobKind<unknown>, job: { id: string; attempts: number; maxAttempts: number }, error: unknown): Promise<void> {
    const message = error instanceof Error ? error.message : String(error);
    const spent = job.attempts >= job.maxAttempts;
    const retryAt = spent ? null : new Date(this.deps.clock.now() + retryDelaySeconds(kind.retry, job.attempts, Math.random()) * 1000);
    const fields = { kind: kind.name, jobId: job.id, attempt: job.attempts, error };
    if (spent) this.deps.log.error('job failed for good: its attempts are spent', fields);
    else this.deps.log.warn('job failed; it is tried again later', { ...fields, retryAt });
    await this.repository.fail(job.id, this.lockedBy, message, retryAt);
  }
}

