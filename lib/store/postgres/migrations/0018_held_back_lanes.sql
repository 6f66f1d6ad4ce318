-- Jobs a limit held back are parked in lanes of their own, so a claim never walks them again to
-- reach the jobs behind. `parked_key` is the limit key that held the job back ('queue:…' or
-- 'key:…'), set by the claim that passed it over and cleared by the claim that takes it; a lane is
-- the parked jobs of one queue under one key, read in claim order only while that key has room.
-- The claim index holds unparked jobs alone; adding a nullable column rewrites nothing, and
-- rebuilding the index reads every scheduled job once, under this migration's lock.
ALTER TABLE {{jobs}} ADD COLUMN parked_key text;
DROP INDEX {{jobs_claim_idx}};
CREATE INDEX {{local:jobs_claim_idx}} ON {{jobs}} (priority, run_at, seq) WHERE state = 'scheduled' AND parked_key IS NULL;
CREATE INDEX {{local:jobs_lane_idx}} ON {{jobs}} (queue, parked_key, priority, run_at, seq) WHERE state = 'scheduled' AND parked_key IS NOT NULL;
-- Parked jobs by run time, for the operator reads that ask for the oldest due job.
CREATE INDEX {{local:jobs_parked_due_idx}} ON {{jobs}} (run_at, seq) WHERE state = 'scheduled' AND parked_key IS NOT NULL;
