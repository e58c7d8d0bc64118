-- Successful logins are limited too, per account and per client address (a client with valid credentials
-- must not be able to log in without end): each is recorded here; the periodic purge deletes them by age.

create table login_successes (
  id           bigint generated always as identity primary key,
  email        text not null,
  client_ip    text not null,
  succeeded_at timestamptz not null default now()
);
create index login_successes_email_idx on login_successes (email, succeeded_at);
create index login_successes_client_ip_idx on login_successes (client_ip, succeeded_at);
create index login_successes_succeeded_at_idx on login_successes (succeeded_at);
