-- The command line's one-time code is bound to the process that started the sign-in: it sent the S256
-- challenge of a verifier it keeps in memory, and must present the verifier to exchange the code.
-- Codes live 60 seconds: the few issued before this column existed are simply dropped.
delete from cli_login_codes;
alter table cli_login_codes add column code_challenge text not null;
