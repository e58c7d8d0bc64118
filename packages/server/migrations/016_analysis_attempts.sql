-- Analysis attempts: a job whose analysis or result could not be stored is tried again later, a few times at
-- most; after that, or at once when the database refuses the result itself, its file is `failed` and the
-- queue moves on. `retry_at` keeps a job that just failed out of the way of the others until then.
alter table analysis_jobs
  add column attempts integer not null default 0,
  add column retry_at timestamptz;
