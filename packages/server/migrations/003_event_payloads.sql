-- NOTIFY payloads must stay under 8000 bytes. An event larger than that (a long description full of
-- escaped characters) is stored here, inside the transaction that publishes it, and its NOTIFY carries
-- only the row's id. Rows are swept after an hour: listeners read them within moments of the commit.
create table event_payloads (
  id         uuid primary key,
  payload    text not null,
  created_at timestamptz not null default now()
);
create index event_payloads_created_at_idx on event_payloads (created_at);
