-- What verify needs (docs/verify.md). Each history entry records which worker a change gave the
-- lease to or took it from, and the deadline of the lease it ended: both NULL where no lease was
-- involved, and on entries written before this migration. Adding nullable columns without a
-- default rewrites nothing.
ALTER TABLE {{job_history}}
  ADD COLUMN worker_id text,
  ADD COLUMN lease_until timestamptz;
-- The audit log by action, newest first: the dashboard's Guarantees page and the scheduled verify
-- read the last recorded runs (action verify.run) without walking every other action. Building it
-- reads the audit log once.
CREATE INDEX {{local:audit_log_action_idx}} ON {{audit_log}} (action, id);
