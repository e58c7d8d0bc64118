-- Accounts their owners manage (name, avatar, password, deletion) and an admin's password reset.

-- An avatar is stored like a project cover: its bytes at DATA_DIR/images/<uuid>.<ext>, a stored_images row
-- counting it towards its owner's quota, its sha256 as its ETag. The column holds that name (as
-- projects.image does); the record's avatarUrl, /uploads/avatars/<name>, is made from it. No avatar_url was
-- ever set before this migration.
alter table users drop column avatar_url;
alter table users add column avatar text unique, add column avatar_sha256 text;

-- Set by the reset-password server command: the one-time password it printed must be changed
-- (POST /api/auth/password) before any other endpoint answers (403 PASSWORD_CHANGE_REQUIRED).
alter table users add column password_change_required boolean not null default false;

-- A deleted account's files in projects that have other members stay, shown as a former member's.
alter table files alter column uploaded_by drop not null;
alter table files drop constraint files_uploaded_by_fkey;
alter table files add constraint files_uploaded_by_fkey foreign key (uploaded_by) references users (id) on delete set null;

-- A replaced, cleared or deleted account's avatar leaves stored_images and enters the removed_bytes ledger,
-- as a project's or vibe's image does (migration 008).
create function forget_dropped_avatar() returns trigger language plpgsql as $$
begin
  if old.avatar is not null and (tg_op = 'DELETE' or new.avatar is distinct from old.avatar) then
    delete from stored_images where name = old.avatar;
    insert into removed_bytes (dir, name) values ('images', old.avatar) on conflict do nothing;
  end if;
  return null;
end $$;

create trigger users_forget_dropped_avatar after update of avatar or delete on users
  for each row execute function forget_dropped_avatar();

-- The session cache holds whether a password change is required too (migration 010's notice).
drop trigger users_notify_changed on users;
create trigger users_notify_changed
  after update of name, email, role, password_change_required or delete on users
  for each row execute function notify_user_changed();

-- Deleting a user ends everything that signs in as them: sessions and refresh tokens (on delete cascade,
-- migration 001) and personal access tokens, whose table (migration 011) must reference users (id) on
-- delete cascade as well.
