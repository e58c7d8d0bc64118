-- Idempotency-Key (API §17): one row per user and key. A row without a status is a request still running
-- (the claim several instances agree on, through the primary key); with one, it holds the first answer to
-- replay. The key is kept only as its SHA-256, and the answer's headers and body only encrypted with a key
-- derived from the Idempotency-Key and the server's secret: the database alone never yields a secret shown once.
create table idempotency_keys (
  user_id uuid not null references users (id) on delete cascade,
  key_hash text not null,
  -- SHA-256 of the method, path and body (as the route can read it before acting): another body is a conflict.
  fingerprint text not null,
  status integer,
  answer bytea,
  created_at timestamptz not null,
  primary key (user_id, key_hash),
  check ((status is null) = (answer is null))
);
-- The purge deletes by age.
create index idempotency_keys_created_at on idempotency_keys (created_at);
