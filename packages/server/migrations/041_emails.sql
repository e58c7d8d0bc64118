-- Outgoing email (§19): one row per message, written in the transaction of what caused it, with the `email`
-- job that sends it (retried on the job's schedule). The id makes the Message-ID, the same on every attempt.
-- What the mail says (subject, text, HTML, headers) is sealed (core/sealed.ts): it may hold a one-time link,
-- which the database alone must not give away; it is dropped once the mail is sent.
create table emails (
  id         uuid primary key,
  kind       text not null,
  to_address text not null,
  content    bytea,
  sent_at    timestamptz,
  created_at timestamptz not null default now()
);
create index emails_age on emails (created_at);

-- Self-service password reset (§19): one-time links, stored as the SHA-256 of their token, an hour long, used
-- once; and every request for one, counted per email and per client address (5 an hour each).
create table password_resets (
  token_hash text primary key,
  user_id    uuid not null references users (id) on delete cascade,
  expires_at timestamptz not null,
  used_at    timestamptz,
  created_at timestamptz not null default now()
);
create index password_resets_of_user on password_resets (user_id);
create index password_resets_age on password_resets (expires_at);

create table password_reset_requests (
  email        text not null,
  client_ip    text not null,
  requested_at timestamptz not null default clock_timestamp()
);
create index password_reset_requests_email on password_reset_requests (email, requested_at);
create index password_reset_requests_ip on password_reset_requests (client_ip, requested_at);
