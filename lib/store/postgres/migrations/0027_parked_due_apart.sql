-- The parked jobs' run-time index (the operator reads' oldest due job) gets a predicate that no
-- claim's conditions imply. With the lanes' own predicate it competed with the lane index for every
-- read of a lane, on estimates alone: under statistics taken before a backlog was parked (no job
-- parked, or a table never analyzed), the planner chose it, and each probe for the next lane read
-- and sorted the whole backlog, so a claim's cost grew with the jobs held back. Only reads that
-- state `coalesce(parked_key, '') <> ''` can use it now; parked keys are never empty. Rebuilding it
-- reads the parked jobs once.
DROP INDEX {{jobs_parked_due_idx}};
CREATE INDEX {{local:jobs_parked_due_idx}} ON {{jobs}} (run_at, seq) WHERE state = 'scheduled' AND coalesce(parked_key, '') <> '';
