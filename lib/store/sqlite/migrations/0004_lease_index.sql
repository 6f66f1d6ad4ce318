-- Running jobs are found by their lease (lapsed ones by claims and the sweep, live ones by the limit
-- counts), so they are indexed by leased_until rather than by claim order, as on PostgreSQL.
CREATE INDEX {{local:jobs_lease_idx}} ON {{jobs}} (leased_until) WHERE state = 'running';
DROP INDEX {{jobs_running_idx}};
