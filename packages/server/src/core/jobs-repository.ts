import type { AdminJobs, FailedJob, JobState } from '@bandcollab/sdk/contract';
import type { JobKind, JobKindName } from './job-kinds.js';
import type { Queryable, Sql } from './sql.js';

/** The channel instances LISTEN on; its payload is the kind of the job enqueued. */
export const JOBS_CHANNEL = 'jobs';
/** The first key of every instance's two-key advisory lock ("jobs"); the second is the instance's `lockedBy`. */
export const INSTANCE_LOCK_CLASS = 0x6a6f6273;
/** Done jobs are kept a day (what ran recently stays visible), failed ones 30 days (§18), then deleted. */
const DONE_RETENTION = '1 day';
const FAILED_RETENTION = '30 days';
/** The failed jobs the admin view lists, newest first. */
const FAILED_LISTED = 100;

export interface EnqueueOptions {
  /** Not before then; now when unset. */
  runAt?: Date;
  /** At most one live (queued or running) job holds a key: enqueueing it again while one does is a no-op. */
  key?: string;
  /** Higher first among the jobs of a kind. */
  priority?: number;
  /** The kind's own when unset. */
  maxAttempts?: number;
  /** Fair kinds take jobs round-robin between fair keys (analysis: the uploader). */
  fairKey?: string;
}

/** A failed job as the admin view lists it. */
export interface FailedJobRow extends Omit<FailedJob, 'createdAt' | 'finishedAt'> {
  createdAt: Date;
  finishedAt: Date | null;
}

export interface JobsOverview extends Omit<AdminJobs, 'failed'> {
  failed: FailedJobRow[];
}

export interface ClaimedJob {
  id: string;
  payload: unknown;
  attempts: number;
  maxAttempts: number;
}

/**
 * Enqueues a job in `tx`, the transaction that makes it necessary (an outbox: a rollback enqueues nothing),
 * and notifies the instances, which PostgreSQL does only once `tx` commits. The job's id, or null when a live
 * job already holds `key`.
 */
export async function enqueue<P>(tx: Queryable, kind: JobKind<P>, payload: P, options: EnqueueOptions = {}): Promise<string | null> {
  const row = {
    kind: kind.name,
    payload: tx.json(payload as Parameters<Sql['json']>[0]),
    maxAttempts: options.maxAttempts ?? kind.maxAttempts,
    priority: options.priority ?? 0,
    key: options.key ?? null,
    fairKey: options.fairKey ?? null,
    ...(options.runAt ? { runAt: options.runAt } : {}),
  };
  const [inserted] = await tx<{ id: string }[]>`
    insert into jobs ${tx(row)}
    on conflict (key) where state in ('queued', 'running') do nothing
    returning id`;
  if (inserted) await tx`select pg_notify(${JOBS_CHANNEL}, ${kind.name})`;
  return inserted?.id ?? null;
}

/**
 * The SQL of the queue's runtime (./jobs.ts) and of its admin view. Undecorated (app.ts registers one), so
 * the queue's own build entry, which its benchmark loads, needs no dependency-injection polyfill.
 */
export class JobsRepository {
  constructor(private readonly sql: Sql) {}

  /** The kinds among `kinds` with a job due at `now`. */
  async dueKinds(kinds: string[], now: Date): Promise<string[]> {
    const rows = await this.sql<{ kind: string }[]>`
      select distinct kind from jobs where state = 'queued' and kind = any(${kinds}) and run_at <= greatest(now(), ${now})`;
    return rows.map((row) => row.kind);
  }

  /**
   * Takes up to `limit` due jobs of a kind no other instance is taking (FOR UPDATE SKIP LOCKED), in one
   * statement that marks them running under `lockedBy`'s lease and counts the attempt. A fair kind takes the
   * oldest job of the fair key whose last job started longest ago (never one first), so keys take turns. Due
   * means `run_at` before the database's time or `now` (the queue's clock, which tests move on), whichever is later.
   */
  async claim(kind: JobKind<unknown>, limit: number, { lockedBy, now, leaseSeconds }: { lockedBy: number; now: Date; leaseSeconds: number }): Promise<ClaimedJob[]> {
    const sql = this.sql;
    const dueAs = (alias: 'j' | 'q') => sql`${sql(alias)}.state = 'queued' and ${sql(alias)}.kind = ${kind.name} and ${sql(alias)}.run_at <= greatest(now(), ${now})`;
    // The outer conditions repeat the inner ones: a row another instance took since the statement began is
    // re-read under the lock, and then no longer passes them.
    const picked = kind.fair
      ? sql`
          select j.id from jobs j
          join (select q.id,
                       row_number() over (partition by q.fair_key order by q.priority desc, q.run_at, q.id) as turn,
                       (select max(s.started_at) from jobs s where s.kind = q.kind and s.fair_key = q.fair_key) as served
                from jobs q where ${dueAs('q')}) queued on queued.id = j.id
          where ${dueAs('j')}
          order by j.priority desc, queued.turn, queued.served nulls first, j.run_at, j.id
          limit ${limit}
          for update of j skip locked`
      : sql`
          select j.id from jobs j where ${dueAs('j')}
          order by j.priority desc, j.run_at, j.id
          limit ${limit}
          for update skip locked`;
    // One statement, its own transaction: one round trip per claim.
    return sql<ClaimedJob[]>`
      with picked as (${picked})
      update jobs set state = 'running', attempts = attempts + 1, locked_by = ${lockedBy}, started_at = now(),
                      locked_until = now() + make_interval(secs => ${leaseSeconds})
      where id in (select id from picked)
      returning id, payload, attempts, max_attempts`;
  }

  /** Renews the leases of the jobs `lockedBy` runs. */
  async renew(ids: string[], lockedBy: number, leaseSeconds: number): Promise<void> {
    await this.sql`
      update jobs set locked_until = now() + make_interval(secs => ${leaseSeconds})
      where id = any(${ids}::uuid[]) and locked_by = ${lockedBy} and state = 'running'`;
  }

  /** The run went well: done. False when the job is no longer this instance's (its lease ran out meanwhile). */
  async finish(id: string, lockedBy: number): Promise<boolean> {
    const updated = await this.sql`
      update jobs set state = 'done', finished_at = now(), locked_by = null, locked_until = null
      where id = ${id} and locked_by = ${lockedBy} and state = 'running'`;
    return updated.count > 0;
  }

  /** The run threw: queued again for `retryAt`, or `failed` (dead) when that is null. */
  async fail(id: string, lockedBy: number, error: string, retryAt: Date | null): Promise<void> {
    await this.sql`
      update jobs set state = ${retryAt ? 'queued' : 'failed'}, run_at = coalesce(${retryAt}, run_at), last_error = ${error},
                      finished_at = ${retryAt ? null : this.sql`now()`}, locked_by = null, locked_until = null
      where id = ${id} and locked_by = ${lockedBy} and state = 'running'`;
  }

  /** Jobs abandoned by a stop: queued again at once, the attempt they were on not counted. */
  async release(ids: string[], lockedBy: number): Promise<void> {
    await this.sql`
      update jobs set state = 'queued', attempts = attempts - 1, locked_by = null, locked_until = null
      where id = any(${ids}::uuid[]) and locked_by = ${lockedBy} and state = 'running'`;
  }

  /**
   * Running jobs whose instance is gone are queued again (or failed, their attempts spent): those whose lease
   * ran out, and at once those whose instance's advisory lock nobody holds (its session ended with it). The
   * kinds of the jobs queued again.
   */
  async reclaim(): Promise<string[]> {
    const rows = await this.sql<{ kind: string }[]>`
      update jobs j set state = case when j.attempts >= j.max_attempts then 'failed' else 'queued' end,
                        finished_at = case when j.attempts >= j.max_attempts then now() end,
                        last_error = 'its instance stopped while it ran', locked_by = null, locked_until = null
      where j.state = 'running'
        and (j.locked_until < now() or not exists (
          select 1 from pg_locks l
          where l.locktype = 'advisory' and l.granted and l.objsubid = 2 and l.classid::bigint = ${INSTANCE_LOCK_CLASS}
            and l.objid::bigint = (j.locked_by::bigint & 4294967295)
            and l.database = (select oid from pg_database where datname = current_database())))
      returning j.kind`;
    return rows.map((row) => row.kind);
  }

  /** Deletes done jobs a day old and failed ones 30 days old. */
  async purgeFinished(): Promise<number> {
    const deleted = await this.sql`
      delete from jobs where (state = 'done' and finished_at < now() - ${DONE_RETENTION}::interval)
                          or (state = 'failed' and finished_at < now() - ${FAILED_RETENTION}::interval)`;
    return deleted.count;
  }

  /** Takes the instance lock `lockedBy` on `locks` (a session of its own), unless it holds it already; false when another does. */
  async holdInstanceLock(locks: Sql, lockedBy: number): Promise<boolean> {
    const [row] = await locks<{ held: boolean }[]>`
      select exists (select 1 from pg_locks where locktype = 'advisory' and pid = pg_backend_pid() and granted and objsubid = 2
                       and classid::bigint = ${INSTANCE_LOCK_CLASS} and objid::bigint = (${lockedBy}::bigint & 4294967295))
             or pg_try_advisory_lock(${INSTANCE_LOCK_CLASS}, ${lockedBy}) as held`;
    return row!.held;
  }

  /** Records `kind` as recurring, its last run now when it is new (an instance's start does its own purge). */
  async schedule(kind: string, now: Date): Promise<void> {
    await this.sql`insert into job_schedules (kind, last_run_at) values (${kind}, ${now}) on conflict (kind) do nothing`;
  }

  /**
   * Enqueues the runs due of the schedules given (kind, and the seconds this instance runs it every), each once
   * across instances: the update that moves a schedule's last run to `now` takes its row, and another
   * instance's waits, then finds it no longer due. Each instance reckons with its own period, so instances set
   * differently run it as often as the shortest one asks. A run is keyed by its kind: none is enqueued while
   * the previous one is still queued or running.
   */
  async enqueueDue(schedules: { kind: JobKind<unknown>; seconds: number }[], now: Date): Promise<string[]> {
    const byName = new Map(schedules.map((schedule) => [schedule.kind.name, schedule.kind]));
    return this.sql.begin(async (tx) => {
      const due = await tx<{ kind: string }[]>`
        update job_schedules s set last_run_at = ${now}
        from unnest(${schedules.map((schedule) => schedule.kind.name)}::text[], ${schedules.map((schedule) => schedule.seconds)}::int[]) as mine(kind, seconds)
        where s.kind = mine.kind and s.last_run_at <= ${now}::timestamptz - make_interval(secs => mine.seconds)
        returning s.kind`;
      for (const { kind } of due) await enqueue(tx, byName.get(kind)!, {}, { key: `schedule:${kind}` });
      return due.map((row) => row.kind);
    });
  }

  /** Counts by kind and state, and each kind's oldest due queued job's age (GET /metrics, cached there). */
  async summary(): Promise<Array<{ kind: string; state: string; count: number; oldestQueuedSeconds: number | null }>> {
    return this.sql`
      select kind, state, count(*)::int as count,
        extract(epoch from now() - min(run_at) filter (where state = 'queued' and run_at <= now()))::float8 as oldest_queued_seconds
      from jobs group by kind, state`;
  }

  /** The admin view (§18): counts by kind and state, the oldest queued job's age, the last failed jobs. */
  async overview(filter: { state?: JobState | undefined; kind?: JobKindName | undefined }): Promise<JobsOverview> {
    const state = filter.state ?? null;
    const kind = filter.kind ?? null;
    const counts = await this.sql<AdminJobs['counts']>`
      select kind, state, count(*)::int as count from jobs
      where (${state}::text is null or state = ${state}) and (${kind}::text is null or kind = ${kind})
      group by kind, state order by kind, state`;
    const [oldest] = await this.sql<{ seconds: number | null }[]>`
      select extract(epoch from now() - min(run_at))::float8 as seconds from jobs
      where state = 'queued' and run_at <= now() and (${kind}::text is null or kind = ${kind})`;
    const failed = await this.sql<FailedJobRow[]>`
      select id, kind, payload, attempts, max_attempts, last_error, created_at, finished_at from jobs
      where state = 'failed' and (${kind}::text is null or kind = ${kind}) and (${state}::text is null or ${state} = 'failed')
      order by finished_at desc, id limit ${FAILED_LISTED}`;
    return { counts, oldestQueuedSeconds: oldest?.seconds ?? null, failed };
  }

  /** Queues a failed job again with its attempts renewed; its state when not failed, null when there is none. */
  async retry(tx: Queryable, id: string): Promise<{ retried: boolean; state: JobState } | null> {
    const [row] = await tx<{ state: JobState; kind: string }[]>`select state, kind from jobs where id = ${id} for update`;
    if (!row) return null;
    if (row.state !== 'failed') return { retried: false, state: row.state };
    await tx`
      update jobs set state = 'queued', attempts = 0, run_at = now(), finished_at = null where id = ${id}`;
    await tx`select pg_notify(${JOBS_CHANNEL}, ${row.kind})`;
    return { retried: true, state: 'queued' };
  }
}
