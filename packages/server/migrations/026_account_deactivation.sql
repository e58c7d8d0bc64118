-- A site ADMIN may deactivate an account: it cannot sign in, its sessions and tokens end, its files stay.
-- null: active.
alter table users add column deactivated_at timestamptz;
