-- The command line's one-time code is bound to the process that started the flow: it sent the S256
-- challenge of a verifier it keeps in memory, and must present the verifier to redeem the code.
-- A code may also carry a provider identity to link (band auth link --web): it is then redeemed, by the
-- account that asked, only at POST /api/auth/idp/link, and never signs anyone in.
-- Codes live 60 seconds: the few issued before these columns existed are simply dropped.
delete from cli_login_codes;
alter table cli_login_codes
  add column code_challenge text not null,
  add column link_issuer text,
  add column link_subject text,
  add constraint cli_login_codes_link_check check ((link_issuer is null) = (link_subject is null));
