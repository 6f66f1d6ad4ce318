-- What verify needs (see the PostgreSQL migration of the same number). Nullable columns at the end
-- of the row, which MariaDB adds in place; the audit log's index by action, newest first.
ALTER TABLE {{job_history}}
  ADD COLUMN worker_id VARCHAR(256) NULL,
  ADD COLUMN lease_until DATETIME(3) NULL;
ALTER TABLE {{audit_log}} ADD KEY audit_log_action_idx (action, id);
