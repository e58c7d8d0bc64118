-- Listening previews of a STEM ZIP's audio entries (§20, PREVIEW_STEMS=true): each entry's preview state and,
-- once made, its facts. The bytes live in the store under previews/<file id>.<entry position>.m4a, beside the
-- file's own key (one flat directory, as every store driver, the orphan scan and backups walk it). NULL: the
-- entry gets none (not audio, or its ZIP was analysed with PREVIEW_STEMS off; `previews backfill` queues those).
alter table stem_entries add column preview text check (preview in ('pending', 'done', 'failed'));
alter table stem_entries add column preview_bytes bigint;
alter table stem_entries add column preview_bitrate integer;
alter table stem_entries add column preview_duration_ms integer;
-- A preview job takes the pending entries of its file.
create index stem_entries_preview_pending_idx on stem_entries (file_id, position) where preview = 'pending';

-- A made entry preview whose row goes (its file deleted for good, or its ZIP analysed again) enters the
-- removed_bytes ledger, as the file's own bytes do (migration 008): the purge removes what the delete's own
-- removal did not (a crash between the commit and the removal).
alter table removed_bytes drop constraint removed_bytes_dir_check;
alter table removed_bytes add constraint removed_bytes_dir_check check (dir in ('files', 'images', 'previews'));

create function remember_removed_entry_preview() returns trigger language plpgsql as $$
begin
  insert into removed_bytes (dir, name) values ('previews', old.file_id || '.' || old.position || '.m4a') on conflict do nothing;
  return null;
end $$;

create trigger stem_entries_remember_removed_preview after delete on stem_entries
  for each row when (old.preview = 'done') execute function remember_removed_entry_preview();
