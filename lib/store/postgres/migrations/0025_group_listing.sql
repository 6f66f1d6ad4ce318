-- The groups listing (docs/groups.md): a group's scheduled jobs by run time, so the listing finds
-- the groups with waiting jobs one index probe each and counts a group's due and later jobs up to
-- its cap without reading the rest of its backlog. Only scheduled grouped jobs get entries (a
-- claimed job's stays, dead, until vacuum); ungrouped jobs never enter. Building it reads the
-- table once, and enqueues and claims wait for this migration's lock on the jobs table meanwhile.
CREATE INDEX {{local:jobs_group_idx}} ON {{jobs}} (group_key, run_at, seq) WHERE state = 'scheduled' AND group_key IS NOT NULL;
