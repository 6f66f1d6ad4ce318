-- The groups listing (see the PostgreSQL migration of the same number). MySQL has no partial
-- index: a generated column holds the group while the job is scheduled, NULL otherwise, and its
-- index gives a group's scheduled jobs by run time. Ungrouped jobs' entries all sit under NULL,
-- where the listing never reads.
ALTER TABLE {{jobs}}
  ADD COLUMN waiting_group_key VARBINARY(1024)
    AS (CASE WHEN state = 'scheduled' THEN group_key END) VIRTUAL,
  ADD KEY jobs_group_idx (waiting_group_key, run_at, seq);
