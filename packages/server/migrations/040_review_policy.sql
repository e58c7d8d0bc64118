-- A project's review policy (§19): what a version needs to be ready for release — this many approvals, no
-- review of it asking for changes, and (when no_open_comments) no open top-level comment in its series.
alter table projects add column review_approvals integer not null default 1 check (review_approvals between 0 and 1000);
alter table projects add column review_no_open_comments boolean not null default true;

-- Whether the version met its project's policy when last looked at: `review.gate_passed` is published when it
-- turns true (again), never twice for one passing (comments/review-gate.ts).
alter table files add column review_ready boolean not null default false;

-- A project's endpoints hear its `project.deleted`: deleting a project retires them (no project, no account,
-- retired_at set) instead of dropping them, so their last deliveries go out; a retired endpoint is deleted
-- once it has nothing pending (webhooks/repository.ts).
alter table webhooks add column retired_at timestamptz;
alter table webhooks drop constraint webhooks_check;
alter table webhooks add constraint webhooks_owner_check
  check (case when retired_at is null then (project_id is null) <> (user_id is null) else project_id is null and user_id is null end);
