-- Webhook endpoints and their deliveries (§19). An endpoint belongs to a project (project_id, managed by its
-- ADMINs, outliving whoever added it) or to an account (user_id: the events of every project it belongs to). Its signing
-- secret is sealed (core/sealed.ts) so the server can sign with it and the database alone cannot; after a
-- rotation the previous one signs beside it until previous_secret_until.
create table webhooks (
  id                    uuid primary key,
  project_id            uuid references projects (id) on delete cascade,
  user_id               uuid references users (id) on delete cascade,
  url                   text not null,
  events                text[] not null,
  format                text not null default 'standard' check (format in ('standard', 'discord', 'slack')),
  description           text,
  enabled               boolean not null default true,
  disabled_reason       text,
  secret                bytea not null,
  previous_secret       bytea,
  previous_secret_until timestamptz,
  -- The first failed attempt since the last success: 5 days of failures disable the endpoint.
  failing_since         timestamptz,
  created_at            timestamptz not null default now(),
  check ((project_id is null) <> (user_id is null))
);
create index webhooks_of_project on webhooks (project_id) where project_id is not null;
create index webhooks_of_account on webhooks (user_id) where user_id is not null;

-- One event's delivery to one endpoint, inserted in the event's transaction with the job that sends it. Its
-- id is the `webhook-id` of every attempt and `body` the exact bytes sent (and signed). Deliveries of one
-- endpoint go in `seq` order, one at a time: only the oldest pending one is attempted, by the job recorded
-- in `claimed_by` while its attempt runs (webhooks/delivery.ts).
create table webhook_deliveries (
  id              uuid primary key default gen_random_uuid(),
  seq             bigserial,
  webhook_id      uuid not null references webhooks (id) on delete cascade,
  event_id        uuid not null,
  type            text not null,
  body            text not null,
  status          text not null default 'pending' check (status in ('pending', 'succeeded', 'failed')),
  next_attempt_at timestamptz,
  claimed_by      uuid,
  -- Attempts on the current schedule (a redelivery starts a new one); every attempt is in webhook_attempts.
  scheduled_attempts integer not null default 0,
  created_at      timestamptz not null default now(),
  unique (webhook_id, event_id)
);
create index webhook_deliveries_order on webhook_deliveries (webhook_id, seq) where status = 'pending';
create index webhook_deliveries_log on webhook_deliveries (webhook_id, created_at desc, id);
create index webhook_deliveries_age on webhook_deliveries (created_at);

-- Every attempt of a delivery, kept with it (30 days).
create table webhook_attempts (
  delivery_id   uuid not null references webhook_deliveries (id) on delete cascade,
  at            timestamptz not null,
  duration_ms   integer not null,
  status_code   integer,
  error         text,
  response_body text not null default ''
);
create index webhook_attempts_of on webhook_attempts (delivery_id, at);
