-- What verify needs to judge an outcome against its lease (docs/verify.md): which worker a change
-- gave the lease to or took it from, and the deadline of the lease it ended. Both are NULL where
-- no lease was involved, and on entries written before this migration. Adding nullable columns
-- without a default rewrites nothing.
ALTER TABLE {{job_history}}
  ADD COLUMN worker_id text,
  ADD COLUMN lease_until timestamptz;
