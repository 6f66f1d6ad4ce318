-- The parked jobs' run-time index gets a predicate no claim's conditions imply (see the PostgreSQL
-- migration of the same number): only the operator reads, which state it, can use it. Rebuilding
-- it reads the jobs table once.
DROP INDEX {{jobs_parked_due_idx}};
CREATE INDEX {{local:jobs_parked_due_idx}} ON {{jobs}} (run_at, seq) WHERE state = 'scheduled' AND coalesce(parked_key, '') <> '';
