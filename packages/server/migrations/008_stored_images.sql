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

create function forget_dropped_image() returns trigger language plpgsql as $$
begin
  if old.image is not null and (tg_op = 'DELETE' or new.image is distinct from old.image) then
    delete from stored_images where name = old.image;
  end if;
  return null;
end $$;

create trigger projects_forget_dropped_image after update of image or delete on projects
  for each row execute function forget_dropped_image();
create trigger vibes_forget_dropped_image after update of image or delete on vibes
  for each row execute function forget_dropped_image();
