-- A job's priority: claims take due jobs by priority (lower first), then run time, then enqueue
-- order. The claim index leads with it, and a claim reads it one priority at a time
-- (claim-steps.sql.ts), so future-dated jobs still sit past where it stops.
ALTER TABLE {{jobs}} ADD COLUMN priority INTEGER NOT NULL DEFAULT 0 CHECK (priority BETWEEN -10 AND 10);
DROP INDEX {{jobs_claim_idx}};
CREATE INDEX {{local:jobs_claim_idx}} ON {{jobs}} (priority, run_at, seq) WHERE state = 'scheduled';
