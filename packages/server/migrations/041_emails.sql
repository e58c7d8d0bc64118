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
