-- §21: a cleared or replaced project cover or vibe image goes to the trash too. Its trash row holds the image
-- (the project's or vibe's `image` column is cleared or takes the new one); the image's stored_images row,
-- which counts it against the uploader's quota, and its bytes stay until the entry is purged. thing_id is the
-- trashed image's own id (a cover can go to the trash more than once); image_of is its project or vibe.
alter table trash drop constraint trash_kind_check;
alter table trash add constraint trash_kind_check check (kind in ('project', 'vibe', 'cut', 'series', 'file', 'comment', 'cover', 'vibe_image'));
alter table trash add column image text unique;
alter table trash add column image_sha256 text;
alter table trash add column image_of uuid;
alter table trash add constraint trash_image_check check ((kind in ('cover', 'vibe_image')) = (image_of is not null));

-- Every image a row refers to, with the sha256 it records: the one list of what the images in the store are
-- kept for (the orphans check, the removed-bytes purge, backup, the purge of untaken images).
create view image_references as
  select image as name, image_sha256 as sha256 from public.projects where image is not null
  union all select image, image_sha256 from public.vibes where image is not null
  union all select avatar, avatar_sha256 from public.users where avatar is not null
  union all select image, image_sha256 from public.trash where image is not null;

-- A project's or vibe's image that leaves for the trash is not dropped.
create or replace function forget_dropped_image() returns trigger language plpgsql as $$
begin
  if old.image is not null and (tg_op = 'DELETE' or new.image is distinct from old.image)
     and not exists (select 1 from public.trash where image = old.image) then
    delete from stored_images where name = old.image;
    insert into removed_bytes (dir, name) values ('images', old.image) on conflict do nothing;
  end if;
  return null;
end $$;

-- A trashed image's entry that goes (purged, or with its project) takes the image with it; a restore empties
-- `image` first.
create function forget_trashed_image() returns trigger language plpgsql as $$
begin
  if old.image is not null then
    delete from stored_images where name = old.image;
    insert into removed_bytes (dir, name) values ('images', old.image) on conflict do nothing;
  end if;
  return null;
end $$;
create trigger trash_forget_image after delete on trash for each row execute function forget_trashed_image();
