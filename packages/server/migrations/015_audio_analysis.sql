-- Audio analysis (§12). Every file carries its analysis state; CUT files their AudioInfo and waveform peaks,
-- STEM ZIPs their entries and summary. Images are never analysed.
alter table files
  add column analysis text not null default 'pending' check (analysis in ('pending', 'done', 'failed', 'unsupported')),
  add column audio jsonb,
  add column stems jsonb,
  add column peaks jsonb;
update files set analysis = 'unsupported' where type = 'IMAGE';

-- The durable queue: one row per file still to analyse, taken with FOR UPDATE SKIP LOCKED by whichever server
-- instance gets to it first and deleted in the transaction that stores the result. The taker holds the row
-- lock while it analyses, so a killed instance (its connection gone) releases the job to the next one at once.
-- No foreign key to files on purpose: deleting a file (or its cut or project) must not wait for the lock of
-- an analysis in progress; a job whose file is gone is dropped when it is taken.
create table analysis_jobs (
  file_id     uuid primary key,
  enqueued_at timestamptz not null default now()
);
create index analysis_jobs_enqueued_at_idx on analysis_jobs (enqueued_at);

-- The backfill: files uploaded before this feature are analysed too, oldest first.
insert into analysis_jobs (file_id, enqueued_at) select id, created_at from files where type <> 'IMAGE';
