-- The whole data model. Later changes go in new numbered files; never edit an applied migration.

create table users (
  id            uuid primary key default gen_random_uuid(),
  email         text not null unique check (email = lower(email)),
  name          text not null,
  -- null for accounts created through the identity provider: they cannot log in with a password
  password_hash text,
  role          text not null check (role in ('MEMBER', 'ADMIN')),
  avatar_url    text,
  created_at    timestamptz not null default now()
);

create table sessions (
  id          uuid primary key default gen_random_uuid(),
  user_id     uuid not null references users (id) on delete cascade,
  remember_me boolean not null,
  expires_at  timestamptz not null,
  revoked_at  timestamptz,
  created_at  timestamptz not null default now()
);
create index sessions_user_id_idx on sessions (user_id);

create table refresh_tokens (
  token_hash  text primary key,
  session_id  uuid not null references sessions (id) on delete cascade,
  rotated_at  timestamptz,
  created_at  timestamptz not null default now()
);
create index refresh_tokens_session_id_idx on refresh_tokens (session_id);

create table login_failures (
  id         bigint generated always as identity primary key,
  email      text not null,
  client_ip  text not null,
  failed_at  timestamptz not null default now()
);
create index login_failures_lookup_idx on login_failures (email, client_ip, failed_at);

create table projects (
  id          uuid primary key default gen_random_uuid(),
  name        text not null,
  description text,
  -- file name under DATA_DIR/images, e.g. "<uuid>.png"
  image       text unique,
  created_at  timestamptz not null default now(),
  updated_at  timestamptz not null default now()
);

create table project_members (
  project_id uuid not null references projects (id) on delete cascade,
  user_id    uuid not null references users (id) on delete cascade,
  role       text not null check (role in ('MEMBER', 'ADMIN')),
  joined_at  timestamptz not null default now(),
  primary key (project_id, user_id)
);
create index project_members_user_id_idx on project_members (user_id);

create table invitations (
  id          uuid primary key default gen_random_uuid(),
  project_id  uuid not null references projects (id) on delete cascade,
  email       text not null check (email = lower(email)),
  role        text not null check (role in ('MEMBER', 'ADMIN')),
  invited_by  uuid not null references users (id) on delete cascade,
  created_at  timestamptz not null default now(),
  expires_at  timestamptz not null,
  unique (project_id, email)
);
create index invitations_email_idx on invitations (email);

create table vibes (
  id          uuid primary key default gen_random_uuid(),
  project_id  uuid not null references projects (id) on delete cascade,
  name        text not null,
  image       text unique,
  position    integer not null,
  created_at  timestamptz not null default now(),
  updated_at  timestamptz not null default now()
);
create index vibes_project_id_idx on vibes (project_id, position);

create table cuts (
  id          uuid primary key default gen_random_uuid(),
  vibe_id     uuid not null references vibes (id) on delete cascade,
  -- kept alongside vibe_id so access checks need one lookup; moves stay within a project
  project_id  uuid not null references projects (id) on delete cascade,
  name        text not null,
  created_at  timestamptz not null default now(),
  updated_at  timestamptz not null default now()
);
create index cuts_vibe_id_idx on cuts (vibe_id, created_at);
create index cuts_project_id_idx on cuts (project_id);

create table files (
  id          uuid primary key,
  cut_id      uuid not null references cuts (id) on delete cascade,
  project_id  uuid not null references projects (id) on delete cascade,
  name        text not null,
  extension   text not null,
  type        text not null check (type in ('CUT', 'STEM', 'IMAGE')),
  size        bigint not null,
  mime_type   text not null,
  sha256      text not null,
  uploaded_by uuid not null references users (id) on delete cascade,
  created_at  timestamptz not null default now()
);
create index files_cut_id_idx on files (cut_id, created_at);
create index files_project_id_idx on files (project_id);
create index files_uploaded_by_idx on files (uploaded_by);

create table share_links (
  token_hash  text primary key,
  file_id     uuid not null references files (id) on delete cascade,
  expires_at  timestamptz,
  created_by  uuid not null references users (id) on delete cascade,
  created_at  timestamptz not null default now()
);
create index share_links_file_id_idx on share_links (file_id);
