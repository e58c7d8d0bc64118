-- A feedback link's creator (or a project ADMIN) can close it to new comments without revoking it: the link
-- still serves the file and shows its comments.
alter table share_links add column comments_closed_at timestamptz;
