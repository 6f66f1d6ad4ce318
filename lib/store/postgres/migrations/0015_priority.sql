-- A job's priority: claims take due jobs by priority (lower first), then run time, then enqueue
-- order. Adding a column with a constant default rewrites nothing, and the check is NOT VALID so
-- it does not scan the table either: every existing row holds the default, and new writes are
-- checked.
ALTER TABLE {{jobs}} ADD COLUMN priority smallint NOT NULL DEFAULT 0,
  ADD CONSTRAINT {{local:jobs_priority_check}} CHECK (priority BETWEEN -10 AND 10) NOT VALID;

-- The claim index leads with the priority. A claim reads it one priority at a time, each range
-- bounded by run_at (claim-steps.sql.ts), so future-dated jobs still sit past where it stops.
-- Building it reads every scheduled job once, under this migration's lock.
DROP INDEX {{jobs_claim_idx}};
CREATE INDEX {{local:jobs_claim_idx}} ON {{jobs}} (priority, run_at, seq) WHERE state = 'scheduled';
