-- §14: a file is one version of a series; comments pinned to moments of a version; one review per member and
-- version.

-- A series is the versions of one mix. Its id is its first version's file id and stays after that version is
-- deleted; `last_version` only grows, so a number is never given twice, and the update that raises it is the
-- row lock that orders concurrent uploads of one series.
create table file_series (
  id           uuid primary key,
  cut_id       uuid not null references cuts (id) on delete cascade,
  last_version integer not null default 1
);
create index file_series_cut_id_idx on file_series (cut_id);

alter table files add column series_id uuid references file_series (id) on delete cascade;
alter table files add column version integer not null default 1;
insert into file_series (id, cut_id) select id, cut_id from files;
update files set series_id = id;

-- Every insert that names no series starts one (uploads, restores): the writers of files rows stay as they are.
create function files_start_series() returns trigger language plpgsql as $$
begin
  if new.series_id is null then
    insert into file_series (id, cut_id) values (new.id, new.cut_id);
    new.series_id := new.id;
    new.version := 1;
  end if;
  return new;
end $$;
create trigger files_start_series before insert on files for each row execute function files_start_series();

alter table files alter column series_id set not null;
create unique index files_series_version_key on files (series_id, version);

create table comments (
  id          uuid primary key,
  file_id     uuid not null references files (id) on delete cascade,
  parent_id   uuid references comments (id) on delete cascade,
  -- Null once the author's account is deleted (shown as "Former member"), and for guests.
  author_id   uuid references users (id) on delete set null,
  -- A guest's name, given on the feedback link; null for members.
  guest_name  text,
  -- The feedback link a guest comment came through: its creator may delete it.
  share_link_id uuid references share_links (id) on delete set null,
  body        text,
  at_ms       integer check (at_ms >= 0),
  end_ms      integer check (end_ms > at_ms),
  mentions    uuid[] not null default '{}',
  resolved_at timestamptz,
  resolved_by uuid references users (id) on delete set null,
  edited      boolean not null default false,
  deleted     boolean not null default false,
  -- Kept to the millisecond, as the API shows them: a poll with ?since=<updatedAt> must not see the row again.
  created_at  timestamptz not null default date_trunc('milliseconds', now()),
  updated_at  timestamptz not null default date_trunc('milliseconds', now())
);
-- The page order (at_ms, nulls last, then created_at) of a file's top-level comments, and their replies.
create index comments_file_order_idx on comments (file_id, (at_ms is null), at_ms, created_at, id) where parent_id is null;
create index comments_parent_idx on comments (parent_id, created_at);
create index comments_mentions_idx on comments using gin (mentions);

create table reviews (
  file_id  uuid not null references files (id) on delete cascade,
  user_id  uuid not null references users (id) on delete cascade,
  state    text not null check (state in ('approved', 'changes_requested')),
  note     text,
  at       timestamptz not null default now(),
  primary key (file_id, user_id)
);
