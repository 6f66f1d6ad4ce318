-- Batches with callbacks (docs/batches.md): the batch a job belongs to, or is a callback of, and
-- which callback it is; both are null for other jobs, so adding them rewrites nothing. A callback
-- waits on every job of its batch through ordinary dependency edges; an `on_failure` one remembers
-- in `parent_failed` that a parent ended without succeeding, which is what releases it (rather
-- than cancels it) when its last parent ends. The constant default rewrites nothing either.
ALTER TABLE {{jobs}}
  ADD COLUMN batch_id uuid,
  ADD COLUMN batch_callback text,
  ADD COLUMN parent_failed boolean NOT NULL DEFAULT false,
  ADD CONSTRAINT {{local:jobs_batch_callback_check}} CHECK (batch_callback IS NULL OR batch_callback IN ('success', 'complete', 'failure')) NOT VALID;

-- The new dependency mode. Each check is NOT VALID so that it does not scan the table: every
-- existing row is null in the new column, and passed the old, narrower mode check; new writes are
-- checked.
ALTER TABLE {{jobs}}
  DROP CONSTRAINT {{local:jobs_dependency_mode_check}},
  ADD CONSTRAINT {{local:jobs_dependency_mode_check}} CHECK (dependency_mode IS NULL OR dependency_mode IN ('on_success', 'on_any_terminal', 'on_failure')) NOT VALID;

-- A batch's jobs, for its summary and its cancel, and the distinct batch ids, newest first, for
-- the listing; jobs of no batch stay out of it.
CREATE INDEX {{local:jobs_batch_idx}} ON {{jobs}} (batch_id) WHERE batch_id IS NOT NULL;
