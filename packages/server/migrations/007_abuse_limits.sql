-- Abuse limits: login failures are also counted per client address over all emails, registrations per
-- client address; the periodic purge deletes by expiry and age.

create index login_failures_client_ip_idx on login_failures (client_ip, failed_at);
create index login_failures_failed_at_idx on login_failures (failed_at);

create table registration_attempts (
  id           bigint generated always as identity primary key,
  client_ip    text not null,
  attempted_at timestamptz not null default now()
);
create index registration_attempts_client_ip_idx on registration_attempts (client_ip, attempted_at);
create index registration_attempts_attempted_at_idx on registration_attempts (attempted_at);

create index sessions_expires_at_idx on sessions (expires_at);
