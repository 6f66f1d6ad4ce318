-- The groups listing (see the PostgreSQL migration of the same number): a group's scheduled jobs
-- by run time, scheduled grouped jobs alone.
CREATE INDEX {{local:jobs_group_idx}} ON {{jobs}} (group_key, run_at, seq) WHERE state = 'scheduled' AND group_key IS NOT NULL;
