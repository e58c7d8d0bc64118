-- A STEM ZIP's entries, one row each, in the ZIP's order. files.stems keeps only the summary (exact counts)
-- and the first 100 entries: a ZIP of tiny entries lists hundreds of thousands, and that list rode on every
-- File record (project detail, cut, file, share answers: about 18 MB per answer for a 39 MB ZIP). The whole
-- list is read only by GET /api/files/:id/entries, a page at a time.
create table stem_entries (
  file_id  uuid not null references files (id) on delete cascade,
  position integer not null check (position >= 0),
  path     text not null,
  size     bigint not null,
  audio    jsonb,
  primary key (file_id, position)
);

insert into stem_entries (file_id, position, path, size, audio)
select f.id, (e.ordinality - 1)::integer, e.entry ->> 'path', (e.entry ->> 'size')::bigint, nullif(e.entry -> 'audio', 'null'::jsonb)
from files f, jsonb_array_elements(f.stems -> 'entries') with ordinality as e (entry, ordinality)
where f.stems is not null;

update files f
set stems = jsonb_set(f.stems, '{entries}', coalesce(
  (select jsonb_agg(e.entry order by e.ordinality)
   from jsonb_array_elements(f.stems -> 'entries') with ordinality as e (entry, ordinality)
   where e.ordinality <= 100),
  '[]'::jsonb))
where f.stems is not null and jsonb_array_length(f.stems -> 'entries') > 100;
