-- Running jobs are found by their lease, not by claim order. A claim looks for lapsed leases on
-- every call; through the (run_at, seq) index it walked every running job in the cluster to find
-- the few whose lease had passed, so its cost grew with the cluster's concurrency. Indexed by
-- leased_until it reads only the lapsed ones. The price is that a heartbeat now changes an indexed
-- column, so it is no longer a HOT update: one index entry per renewal, every heartbeat interval,
-- which is small beside the claim it saves on every poll.
CREATE INDEX {{local:jobs_lease_idx}} ON {{jobs}} (leased_until) WHERE state = 'running';
-- (An index lives in its table's schema, so the qualified form of its name is the table form.)
DROP INDEX {{jobs_running_idx}};
