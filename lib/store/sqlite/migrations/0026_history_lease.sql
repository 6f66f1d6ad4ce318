-- What verify needs (see the PostgreSQL migration of the same number). The lease deadline is in
-- epoch milliseconds, as the jobs table keeps it.
ALTER TABLE {{job_history}} ADD COLUMN worker_id TEXT;
ALTER TABLE {{job_history}} ADD COLUMN lease_until INTEGER;
CREATE INDEX {{local:audit_log_action_idx}} ON {{audit_log}} (action, id);
