-- Batches with callbacks (see the PostgreSQL migration of the same number). A batch's jobs and its
-- callback jobs share batch_id; batch_callback says which callback a job is, NULL for the batch's
-- own jobs. parent_failed (0 or 1) is an on_failure job's memory that a settled parent did not
-- succeed: the settle that lowers its latch to 0 reads it on the row it writes anyway.
ALTER TABLE {{jobs}} ADD COLUMN batch_id TEXT;
ALTER TABLE {{jobs}} ADD COLUMN batch_callback TEXT CHECK (batch_callback IS NULL OR batch_callback IN ('success', 'complete', 'failure'));
ALTER TABLE {{jobs}} ADD COLUMN parent_failed INTEGER NOT NULL DEFAULT 0;

-- The on_failure mode. SQLite cannot alter a column's CHECK (migration 0003 allows only
-- 'on_success' and 'on_any_terminal'), short of rebuilding the jobs table. An on_failure job is
-- stored as dependency_mode 'on_any_terminal' with fails_only = 1: it settles like on_any_terminal
-- (a parent's failure lowers its latch and never cancels it), and the settle (sqlite-effects.ts,
-- settle-dependencies.query.ts) reads fails_only where the latch reaches 0, to cancel it when no
-- parent failed. The row mapper (sqlite-row.ts) reads it back as 'on_failure'.
ALTER TABLE {{jobs}} ADD COLUMN fails_only INTEGER NOT NULL DEFAULT 0
  CHECK (fails_only = 0 OR (fails_only = 1 AND dependency_mode IS 'on_any_terminal'));

-- A batch's jobs, for its summary and its cancel, and the distinct batch ids, newest first, for
-- the listing; jobs of no batch stay out of it.
CREATE INDEX {{local:jobs_batch_idx}} ON {{jobs}} (batch_id) WHERE batch_id IS NOT NULL;
