-- The groups listing (see the PostgreSQL migration of the same number). MySQL has no partial
-- index: generated columns hold a scheduled grouped job's group and run time, NULL for every other
-- job, and their index gives a group's scheduled jobs by run time. Every other job's entry is
-- (NULL, NULL, seq) for its whole life, so a change of its state or run time leaves the index as
-- it was; the listing never reads under NULL.
ALTER TABLE {{jobs}}
  ADD COLUMN waiting_group_key VARBINARY(1024)
    AS (CASE WHEN state = 'scheduled' THEN group_key END) VIRTUAL,
  ADD COLUMN waiting_group_run_at DATETIME(3)
    AS (CASE WHEN state = 'scheduled' AND group_key IS NOT NULL THEN run_at END) VIRTUAL,
  ADD KEY jobs_group_idx (waiting_group_key, waiting_group_run_at, seq);
