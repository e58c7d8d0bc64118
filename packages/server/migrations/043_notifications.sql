-- Email notifications (§19).

-- What each account is emailed about; an account without a row has the defaults (every kind on, a daily digest).
create table notification_preferences (
  user_id         uuid primary key references users (id) on delete cascade,
  mentions        boolean not null default true,
  replies         boolean not null default true,
  review_requests boolean not null default true,
  new_versions    boolean not null default true,
  webhooks        boolean not null default true,
  digest          text not null default 'daily' check (digest in ('daily', 'weekly', 'off')),
  updated_at      timestamptz not null default now()
);

-- Members asked to review a version (File.reviewRequests); a request ends when that member reviews the version.
create table review_requests (
  file_id      uuid not null references files (id) on delete cascade,
  user_id      uuid not null references users (id) on delete cascade,
  requested_by uuid references users (id) on delete set null,
  requested_at timestamptz not null default now(),
  primary key (file_id, user_id)
);
create index review_requests_of_user on review_requests (user_id);

-- The activity digests are made of: one row per event worth telling (written with the event, in its
-- transaction), with the members already emailed about it at once. No foreign key on the project: a project's
-- delete publishes its own event inside the transaction that deletes it. Rows older than a week go.
create table notification_activity (
  id         bigserial primary key,
  project_id uuid not null,
  actor_id   uuid,
  type       text not null,
  notified   uuid[] not null default '{}',
  at         timestamptz not null default now()
);
create index notification_activity_of_project on notification_activity (project_id, at);
create index notification_activity_age on notification_activity (at);

-- One digest per account and period (the day or week ending at DIGEST_HOUR UTC): the primary key is the claim
-- that makes it go once across instances; `covered_until` is where the next digest's activity starts.
create table notification_digests (
  user_id       uuid not null references users (id) on delete cascade,
  period_start  timestamptz not null,
  covered_until timestamptz not null,
  primary key (user_id, period_start)
);
