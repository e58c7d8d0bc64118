-- A link made with `reuse` (band publish --share in CI) is handed out again to its creator by the next such
-- request instead of a new link per run. Its token is kept for that, encrypted with a key derived from the
-- server's secret and the link's id, so the database alone never yields it. Other links keep none.
alter table share_links add column token_sealed bytea;
