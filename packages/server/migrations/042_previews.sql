-- Listening previews (§20): each file's preview state and, once made, its facts. The bytes live in the store
-- under previews/<file id>.m4a. CUT files stored before this change are `pending` (the `previews backfill`
-- command queues them) unless their analysis failed, which a preview would fail alike; other types have none.
alter table files add column preview text not null default 'none' check (preview in ('pending', 'done', 'failed', 'none'));
alter table files add column preview_bytes bigint;
alter table files add column preview_bitrate integer;
alter table files add column preview_duration_ms integer;
update files set preview = case when analysis = 'failed' then 'failed' else 'pending' end where type = 'CUT';
-- The backfill walks the pending ones in id order.
create index files_preview_pending_idx on files (id) where preview = 'pending';

-- Stream-only links (`download: false`) and per-link plays and downloads.
alter table share_links add column download boolean not null default true;
alter table share_links add column plays bigint not null default 0;
alter table share_links add column downloads bigint not null default 0;

-- A play is a preview fetch from offset 0 by a client not seen on the link in 30 minutes: who was seen when.
create table share_link_listeners (
  share_link_id uuid not null references share_links (id) on delete cascade,
  client        text not null,
  seen_at       timestamptz not null,
  primary key (share_link_id, client)
);
