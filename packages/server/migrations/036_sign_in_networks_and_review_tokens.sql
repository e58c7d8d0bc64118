-- The networks (/24 for IPv4, /64 for IPv6) each account signed in from, and when last: a login from one of
-- them within 30 days waits in the password-hashing queue's reserved lane, which a flood from elsewhere cannot
-- fill. In PostgreSQL, so every instance knows it; the periodic purge deletes rows older than 30 days.
create table sign_in_networks (
  user_id      uuid not null references users (id) on delete cascade,
  network      text not null,
  signed_in_at timestamptz not null default now(),
  primary key (user_id, network)
);
create index sign_in_networks_signed_in_at_idx on sign_in_networks (signed_in_at);

-- A review made through a personal access token (one with the review scope) names that token, as events do.
alter table reviews add column token_name text;

-- The review scope (§11): a token that may review, which write does not include.
alter table personal_access_tokens drop constraint personal_access_tokens_scope_check;
alter table personal_access_tokens add constraint personal_access_tokens_scope_check check (scope in ('read', 'write', 'review'));
