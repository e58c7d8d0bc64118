-- Names identify things for people and scripts: a vibe's name is unique within its project and a cut's
-- within its vibe, compared case-insensitively (names are stored trimmed). Unique indexes decide, so two
-- parallel creates of one name cannot both commit.
--
-- Earlier versions allowed duplicates: the oldest of each keeps its name, the others become "Name (2)",
-- "Name (3)", … (the first number whose name is free, shortened to stay within 200 characters).
do $$
declare
  duplicate record;
  n integer;
  candidate text;
begin
  for duplicate in
    select id, project_id, name, rank from (
      select id, project_id, name, row_number() over (partition by project_id, lower(name) order by created_at, id) as rank
      from vibes) ranked
    where rank > 1
    order by project_id, lower(name), rank
  loop
    n := duplicate.rank;
    loop
      candidate := left(duplicate.name, 200 - length(' (' || n || ')')) || ' (' || n || ')';
      exit when not exists (select 1 from vibes where project_id = duplicate.project_id and lower(name) = lower(candidate));
      n := n + 1;
    end loop;
    update vibes set name = candidate, updated_at = now() where id = duplicate.id;
  end loop;

  for duplicate in
    select id, vibe_id, name, rank from (
      select id, vibe_id, name, row_number() over (partition by vibe_id, lower(name) order by created_at, id) as rank
      from cuts) ranked
    where rank > 1
    order by vibe_id, lower(name), rank
  loop
    n := duplicate.rank;
    loop
      candidate := left(duplicate.name, 200 - length(' (' || n || ')')) || ' (' || n || ')';
      exit when not exists (select 1 from cuts where vibe_id = duplicate.vibe_id and lower(name) = lower(candidate));
      n := n + 1;
    end loop;
    update cuts set name = candidate, updated_at = now() where id = duplicate.id;
  end loop;
end
$$;

create unique index vibes_project_name_key on vibes (project_id, lower(name));
create unique index cuts_vibe_name_key on cuts (vibe_id, lower(name));
