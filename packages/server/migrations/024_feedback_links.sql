-- §14 feedback links: a file link may follow its series (serve the newest version at each access) and may let
-- whoever holds it comment without an account.
alter table share_links add column follow text not null default 'this' check (follow in ('this', 'latest'));
alter table share_links add column allow_comments boolean not null default false;

-- One row per accepted guest comment, kept apart from the comments (a deleted comment still counted): the
-- limit per link and client address is counted here, so every server instance sees the same count.
create table guest_comment_marks (
  share_link_id uuid not null references share_links (id) on delete cascade,
  client_ip     text not null,
  at            timestamptz not null default now()
);
create index guest_comment_marks_idx on guest_comment_marks (share_link_id, client_ip, at);
