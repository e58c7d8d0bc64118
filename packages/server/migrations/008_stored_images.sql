-- Every image stored under DATA_DIR/images (project covers, vibe images), with its size and uploader, so a
-- user's quota counts images as well as files. The row is written when the image is stored (after the
-- quota check in the same transaction), and goes when the project or vibe drops or replaces the image.
-- Images stored before this migration have no row and count towards no quota.
create table stored_images (
  name        text primary key,
  size        bigint not null check (size > 0),
  uploaded_by uuid references users (id) on delete set null,
  created_at  timestamptz not null default now()
);
create index stored_images_uploaded_by_idx on stored_images (uploaded_by);

-- The stored bytes whose record a committed transaction removed (a file row, a project's or vibe's image).
-- Their bytes are removed after the commit; when that did not happen (a crash, a failed unlink), the start-up
-- sweep deletes them instead of moving them to orphans/, and then empties this table.
create table removed_bytes (
  dir  text not null check (dir in ('files', 'images')),
  name text not null,
  primary key (dir, name)
);

create function remember_removed_file() returns trigger language plpgsql as $$
begin
  insert into removed_bytes (dir, name) values ('files', old.id || '.' || old.extension) on conflict do nothing;
  return null;
end $$;

create trigger files_remember_removed after delete on files
  for each row execute function remember_removed_file();

create function forget_dropped_image() returns trigger language plpgsql as $$
begin
  if old.image is not null and (tg_op = 'DELETE' or new.image is distinct from old.image) then
    delete from stored_images where name = old.image;
    insert into removed_bytes (dir, name) values ('images', old.image) on conflict do nothing;
  end if;
  return null;
end $$;

create trigger projects_forget_dropped_image after update of image or delete on projects
  for each row execute function forget_dropped_image();
create trigger vibes_forget_dropped_image after update of image or delete on vibes
  for each row execute function forget_dropped_image();
