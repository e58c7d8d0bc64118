-- One durable job queue for every kind of background work (§18): analysis, previews, webhook deliveries,
-- emails, digests, purges. A job is enqueued in the transaction that makes it necessary (an outbox), taken
-- by one instance with FOR UPDATE SKIP LOCKED in a short transaction that marks it `running` under a lease
-- (locked_by, locked_until), and run with no database connection held. The lease is renewed while it runs;
-- a job whose lease ran out, or whose instance is gone (its advisory lock freed with its session), is queued
-- again (core/jobs.ts). `key`, unique among live jobs, keeps one job per purpose (one analysis per file, one
-- run of a schedule at a time); `fair_key` groups the jobs taken round-robin (analysis: by uploader): the
-- next job is the oldest of the key whose last job started longest ago.
create table jobs (
  id           uuid primary key default gen_random_uuid(),
  kind         text not null,
  payload      jsonb not null default '{}',
  state        text not null default 'queued' check (state in ('queued', 'running', 'done', 'failed')),
  run_at       timestamptz not null default now(),
  attempts     integer not null default 0,
  max_attempts integer not null check (max_attempts >= 1),
  last_error   text,
  priority     integer not null default 0,
  key          text,
  fair_key     text,
  -- The advisory-lock key of the instance running it (core/jobs.ts): its lock is held while it lives.
  locked_by    integer,
  locked_until timestamptz,
  -- When its last attempt started: a fair kind serves first the fair key served least recently.
  started_at   timestamptz,
  created_at   timestamptz not null default now(),
  finished_at  timestamptz
);
create unique index jobs_live_key on jobs (key) where state in ('queued', 'running');
create index jobs_queued on jobs (kind, priority desc, run_at) where state = 'queued';
create index jobs_fair_served on jobs (kind, fair_key, started_at) where fair_key is not null;
create index jobs_running on jobs (locked_until) where state = 'running';
create index jobs_finished on jobs (state, finished_at) where state in ('done', 'failed');

-- Recurring work: one row per schedule; the instance whose update moves last_run_at on enqueues that run
-- (each reckons with its own period: instances set differently run it as often as the shortest asks).
create table job_schedules (
  kind        text primary key,
  last_run_at timestamptz not null
);

-- The analysis queue's jobs move over as they stand (attempts, the retry they wait for), fair by uploader.
insert into jobs (kind, payload, run_at, attempts, max_attempts, key, fair_key, created_at)
select 'analysis', jsonb_build_object('fileId', a.file_id), coalesce(a.retry_at, a.enqueued_at), a.attempts, 3,
       'analysis:' || a.file_id, f.uploaded_by::text, a.enqueued_at
from analysis_jobs a left join files f on f.id = a.file_id;
drop table analysis_jobs;
