-- Personal access tokens (bcp_…): long-lived, scoped, expiring credentials for CI and scripts. Only the
-- sha256 of a token is stored; a request finds its token by that hash (the unique index), in one lookup.
-- project_ids null: every project the owner belongs to; otherwise only those (still only while a member).
create table personal_access_tokens (
  id           uuid primary key default gen_random_uuid(),
  user_id      uuid not null references users (id) on delete cascade,
  name         text not null,
  token_hash   text not null unique,
  token_hint   text not null,
  scope        text not null check (scope in ('read', 'write')),
  project_ids  uuid[] check (project_ids is null or cardinality(project_ids) > 0),
  expires_at   timestamptz not null,
  last_used_at timestamptz,
  created_at   timestamptz not null default now()
);
create index personal_access_tokens_user_id_idx on personal_access_tokens (user_id, created_at desc);
