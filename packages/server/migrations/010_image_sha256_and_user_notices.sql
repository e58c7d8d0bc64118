-- The sha256 of each project cover and vibe image, recorded at upload: it is the image's ETag, so a GET or
-- HEAD no longer hashes the bytes. Images stored before this are null here and hashed once, on first read.
alter table projects add column image_sha256 text;
alter table vibes add column image_sha256 text;

-- Every server instance keeps the principals (id, name, email, role) of active sessions in memory
-- (auth/session-cache.ts). A change to what it holds is announced to all of them on bandcollab_users, by
-- the database itself, whichever process makes it (the set-role command, an operator's SQL): a user's
-- name, email or role changed, or the user deleted (which deletes their sessions).
create function notify_user_changed() returns trigger language plpgsql as $$
begin
  perform pg_notify('bandcollab_users', old.id::text);
  return null;
end
$$;

create trigger users_notify_changed
  after update of name, email, role or delete on users
  for each row execute function notify_user_changed();
