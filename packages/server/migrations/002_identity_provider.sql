-- Sign-in through an external OpenID Connect provider (API.md §8).

-- An account is linked to a provider's subject once; later sign-ins find it by (issuer, subject),
-- even when the provider's email for that subject changes.
create table identities (
  issuer     text not null,
  subject    text not null,
  user_id    uuid not null references users (id) on delete cascade,
  created_at timestamptz not null default now(),
  primary key (issuer, subject)
);
create index identities_user_id_idx on identities (user_id);

-- One-time codes handed to the command line's loopback listener, exchanged for tokens.
-- Stored only as SHA-256; bound to the loopback redirect they were sent to; single use.
create table cli_login_codes (
  code_hash    text primary key,
  user_id      uuid not null references users (id) on delete cascade,
  redirect_uri text not null,
  expires_at   timestamptz not null,
  used_at      timestamptz,
  created_at   timestamptz not null default now()
);
