-- Which database this is. DATA_DIR/database.json records the id of the database its stored files belong to,
-- so a server started on that DATA_DIR with another database (a wrong DATABASE_URL, a second server beside a
-- running one) refuses to start instead of taking every stored file for an orphan. One row; a backup leaves it
-- out, since a restored copy is another database.
create table database_identity (
  id uuid primary key default gen_random_uuid(),
  one_row boolean not null default true unique check (one_row),
  created_at timestamptz not null default now()
);
insert into database_identity default values;
