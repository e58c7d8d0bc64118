-- Resumable uploads follow the rules multipart uploads have.
-- `metadata`: the Upload-Metadata header the creation sent, which HEAD repeats (tus 1.0.0). Uploads created
-- before this migration carry none (they expire within a day).
alter table resumable_uploads add column metadata text;

-- A maximum age from creation (7 days), whatever bytes keep arriving: uploads already there get it too.
update resumable_uploads set expires_at = least(expires_at, created_at + interval '7 days');

-- The bytes of an upload whose row goes, however it goes (its cut, project or owner deleted, by cascade),
-- are removed by the instances that hear this notice once the deletion commits (a rolled-back one says
-- nothing); the purge removes what no instance heard.
create function notify_resumable_upload_deleted() returns trigger language plpgsql as $$
begin
  perform pg_notify('resumable_upload_deleted', old.id::text);
  return null;
end $$;

create trigger resumable_upload_deleted after delete on resumable_uploads
  for each row execute function notify_resumable_upload_deleted();

-- The quota counts an incomplete upload's whole length from its creation on (by owner).
create index resumable_uploads_owner_incomplete_idx on resumable_uploads (owner_id, expires_at) include (length) where completed_at is null;
drop index resumable_uploads_incomplete_idx;
