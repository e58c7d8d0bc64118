-- An invitation is accepted through its link: the SHA-256 (hex) of the link's token is all that is kept.
-- Invitations written before links existed get the hash of a token nobody holds: they stay listed and an
-- identity provider's verified email still redeems them; inviting the email again gives it a link.
alter table invitations add column token_hash text;
update invitations set token_hash = encode(sha256(convert_to(gen_random_uuid()::text || id::text, 'UTF8')), 'hex');
alter table invitations alter column token_hash set not null;
alter table invitations add constraint invitations_token_hash_key unique (token_hash);
