-- The parked jobs' run-time index (the operator reads' oldest due job) gets a predicate that no
-- claim's conditions imply. With the lanes' own predicate it competed with the lane index for every
-- read of a lane, on estimates alone: under statistics taken before a backlog was parked (no job
-- parked, or a table never analyzed), the planner chose it, and each probe for the next lane read
-- and sorted the whole backlog, so a claim's cost grew with the jobs held back. Only reads that
-- state `coalesce(parked_key, '') <> ''` can use it now; parked keys are never empty.
-- The new index is built before the old one goes, so the build reads the jobs table once under a
-- lock that lets reads go on (enqueues and claims wait for it), and the lock that stops reads too
-- is taken only for the drop and the rename.
CREATE INDEX {{local:jobs_parked_due_next_idx}} ON {{jobs}} (run_at, seq) WHERE state = 'scheduled' AND coalesce(parked_key, '') <> '';
DROP INDEX {{jobs_parked_due_idx}};
ALTER INDEX {{jobs_parked_due_next_idx}} RENAME TO {{local:jobs_parked_due_idx}};
