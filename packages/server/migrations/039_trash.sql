-- §21 Trash. A delete (with TRASH_RETENTION_DAYS > 0) writes one `trash` row and stamps its id on the thing
-- and on every row under it that is not already in the trash (a file trashed before its cut keeps its own
-- entry: restoring the cut leaves it in the trash). Restoring clears the stamp of that entry only; purging
-- deletes the stamped rows, and then the bytes go through the removed_bytes ledger as a hard delete's do.
--
-- Where visibility is decided: here, once. The schema `live` holds a view per trashable table without its
-- stamped rows, and the server's connections put `live` first on their search_path, so every existing query
-- (`from files`, `update cuts`, `insert into comments`) reads and writes only what is not trashed, and no
-- repository repeats the rule. The views are simple (one table, a WHERE): PostgreSQL updates through them and
-- takes the table's defaults. Code that must see trashed rows (the trash itself, quotas, the store's
-- references, backup, purges) names `public.` explicitly. Tables without a view reach projects through one that
-- has one (a trashed project's members and invitations, a trashed file's reviews are filtered by their view).
-- A view lists its table's columns as they were when it was made: the server makes the views again after every
-- run that applied a migration (core/database.ts), so a later `add column` shows in them; a later migration
-- that drops or retypes a column of these tables runs `drop schema live cascade` first.
create table trash (
  id            uuid primary key default gen_random_uuid(),
  kind          text not null check (kind in ('project', 'vibe', 'cut', 'series', 'file', 'comment')),
  -- The project's, vibe's, cut's, series', file version's or comment's id.
  thing_id      uuid not null,
  -- Deferred, as the trash_id stamps are: a restored backup loads trash and projects in one order or the other.
  project_id    uuid not null references projects (id) on delete cascade deferrable initially deferred,
  -- What it was called, for the trash lists (the row itself is invisible to the lists' usual queries).
  name          text not null,
  deleted_by    uuid references users (id) on delete set null,
  trashed_at    timestamptz not null,
  trashed_until timestamptz not null,
  unique (kind, thing_id)
);
create index trash_project_idx on trash (project_id, trashed_at desc);
create index trash_deleted_by_idx on trash (deleted_by, trashed_at desc);
create index trash_until_idx on trash (trashed_until);

alter table projects add column trash_id uuid references trash (id) deferrable initially deferred;
alter table vibes add column trash_id uuid references trash (id) deferrable initially deferred;
alter table cuts add column trash_id uuid references trash (id) deferrable initially deferred;
alter table file_series add column trash_id uuid references trash (id) deferrable initially deferred;
alter table files add column trash_id uuid references trash (id) deferrable initially deferred;
alter table comments add column trash_id uuid references trash (id) deferrable initially deferred;
create index projects_trash_idx on projects (trash_id) where trash_id is not null;
create index vibes_trash_idx on vibes (trash_id) where trash_id is not null;
create index cuts_trash_idx on cuts (trash_id) where trash_id is not null;
create index file_series_trash_idx on file_series (trash_id) where trash_id is not null;
create index files_trash_idx on files (trash_id) where trash_id is not null;
create index comments_trash_idx on comments (trash_id) where trash_id is not null;
-- A project's or cut's files as the `live` views read them: the full indexes would walk every trashed file of
-- the project first (a project detail with 10,000 trashed files answered at a third of its rate).
create index files_live_project_idx on files (project_id, created_at, id) where trash_id is null;
create index files_live_cut_idx on files (cut_id, created_at, id) where trash_id is null;

-- A trashed thing keeps its name, path and position (a restore puts them back) without holding them: the
-- uniqueness rules are over what is not trashed. A position is an exclusion constraint, which (unlike a unique
-- index) can be both partial and deferred, as reordering needs.
drop index vibes_project_name_key;
create unique index vibes_project_name_key on vibes (project_id, lower(name)) where trash_id is null;
drop index cuts_vibe_name_key;
create unique index cuts_vibe_name_key on cuts (vibe_id, lower(name)) where trash_id is null;
drop index file_series_cut_path_key;
create unique index file_series_cut_path_key on file_series (cut_id, path_key) where path_key is not null and trash_id is null;
alter table vibes drop constraint vibes_project_position_key;
alter table vibes add constraint vibes_project_position_key
  exclude using btree (project_id with =, position with =) where (trash_id is null) deferrable initially deferred;

create function create_live_views() returns void language plpgsql as $$
begin
  drop schema if exists live cascade;
  create schema live;
  create view live.projects as select * from public.projects where trash_id is null;
  create view live.vibes as select * from public.vibes where trash_id is null;
  create view live.cuts as select * from public.cuts where trash_id is null;
  create view live.file_series as select * from public.file_series where trash_id is null;
  create view live.files as select * from public.files where trash_id is null;
  create view live.comments as select * from public.comments where trash_id is null;
  create view live.project_members as select * from public.project_members m
    where exists (select 1 from public.projects p where p.id = m.project_id and p.trash_id is null);
  create view live.invitations as select * from public.invitations i
    where exists (select 1 from public.projects p where p.id = i.project_id and p.trash_id is null);
  create view live.reviews as select * from public.reviews r
    where exists (select 1 from public.files f where f.id = r.file_id and f.trash_id is null);
end
$$;
select create_live_views();
