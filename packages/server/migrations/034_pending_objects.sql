-- The ledger of objects being written (core/pending-objects.ts). An upload writes its object at its final key
-- before the row that refers to it commits, so a process killed in between would leave an object no row
-- names. The key is recorded here (its own short transaction) before the object can appear; the transaction
-- that records the row deletes it; a failed write removes the object and then its entry. What a crash leaves
-- here, the purge job removes (object, then entry) once it is older than any upload in flight can be.
create table pending_objects (
  key        text primary key,
  created_at timestamptz not null default now()
);
create index pending_objects_created_at_idx on pending_objects (created_at);
