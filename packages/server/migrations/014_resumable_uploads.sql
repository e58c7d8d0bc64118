-- Resumable uploads (tus): one row per upload, its bytes at DATA_DIR/resumable/<id>. `received` is the offset
-- a client resumes at; it only moves forward once the bytes up to it are on disk (fsync before the update).
-- A completed upload keeps its row, with the file it became, until it expires, so a client that lost the
-- answer of its last PATCH still learns the file id.
create table resumable_uploads (
  id           uuid primary key,
  owner_id     uuid not null references users (id) on delete cascade,
  cut_id       uuid not null references cuts (id) on delete cascade,
  file_name    text not null,
  display_name text,
  extension    text not null,
  length       bigint not null check (length > 0),
  received     bigint not null default 0 check (received between 0 and length),
  file_id      uuid references files (id) on delete set null,
  completed_at timestamptz,
  expires_at   timestamptz not null,
  created_at   timestamptz not null default now()
);
create index resumable_uploads_incomplete_idx on resumable_uploads (owner_id) where completed_at is null;
create index resumable_uploads_expires_at_idx on resumable_uploads (expires_at);
