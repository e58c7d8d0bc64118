-- Resumable uploads through the storage interface (core/store), so any instance continues an upload another
-- began: the bytes go to the store in parts of one size (a multipart upload into the key of the file the
-- upload becomes); what PostgreSQL keeps is the truth about them (the store is never asked to list parts).
alter table resumable_uploads
  -- the id of the file it becomes: its bytes are stored at files/<object_id>.<extension> from the first part on
  add column object_id    uuid,
  -- the store's multipart upload, once the first whole part was written
  add column multipart_id text,
  -- [{ "partNumber": 1, "etag": "…" }, …], every part of the store's part size
  add column parts        jsonb not null default '[]',
  -- the bytes after the last part (shorter than a part)
  add column tail         bytea not null default '\x'::bytea,
  -- the upload's first bytes (up to the longest signature), checked as soon as they have arrived
  add column head         bytea not null default '\x'::bytea,
  -- the sha256 state (hash-wasm's save()) over the first `received` bytes; null before any byte
  add column hash_state   bytea;

-- Uploads begun before kept their bytes in DATA_DIR/resumable/<id>, which this version no longer reads:
-- they cannot be continued (clients start them again); their files are removed with the directory's leftovers.
delete from resumable_uploads where completed_at is null;
update resumable_uploads set object_id = coalesce(file_id, gen_random_uuid());
alter table resumable_uploads alter column object_id set not null;

-- Multipart uploads whose resumable upload is gone (terminated, expired, its cut or owner deleted): the purge
-- job aborts them in the store, whichever instance deleted the row, so no parts stay billed.
create table abandoned_multipart_uploads (
  object_key   text not null,
  multipart_id text not null primary key,
  recorded_at  timestamptz not null default now()
);

create function record_abandoned_multipart_upload() returns trigger language plpgsql as $$
begin
  if old.multipart_id is not null and old.completed_at is null then
    insert into abandoned_multipart_uploads (object_key, multipart_id)
    values ('files/' || old.object_id || '.' || old.extension, old.multipart_id)
    on conflict do nothing;
  end if;
  return null;
end $$;

create trigger resumable_upload_abandoned after delete on resumable_uploads
  for each row execute function record_abandoned_multipart_upload();
