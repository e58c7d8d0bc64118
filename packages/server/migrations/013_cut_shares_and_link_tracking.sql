-- Share links of cuts beside those of files, each link with an id of its own (so one link can be listed and
-- revoked; the token is never stored), and how often and when it was last used.
alter table share_links add column id uuid not null default gen_random_uuid();
create unique index share_links_id_key on share_links (id);

alter table share_links alter column file_id drop not null;
alter table share_links add column cut_id uuid references cuts (id) on delete cascade;
alter table share_links add constraint share_links_one_target check ((file_id is null) <> (cut_id is null));
create index share_links_cut_id_idx on share_links (cut_id);

-- One small update per page view or download (core of the counting rule: shares/service.ts).
alter table share_links add column access_count bigint not null default 0;
alter table share_links add column last_accessed_at timestamptz;
