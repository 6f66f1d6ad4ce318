-- Batches with callbacks (see the PostgreSQL migration of the same number). A batch's jobs and its
-- callback jobs share batch_id (an id like the jobs', so the same type); batch_callback says which
-- callback a job is, NULL for the batch's own jobs. parent_failed is an on_failure job's memory that
-- a settled parent did not succeed: the settle that lowers its latch to 0 reads it on the row it
-- already locks, so releasing or cancelling it costs nothing per parent. 'on_failure' is appended
-- to dependency_mode's ENUM (appending keeps every stored value's index: a change of metadata only).
-- MySQL has no partial index: batch_id's index holds a NULL entry for every job outside a batch,
-- which sort together ahead of the batches. One ALTER, so a run cut short changed nothing.
ALTER TABLE {{jobs}}
  MODIFY COLUMN dependency_mode ENUM('on_success', 'on_any_terminal', 'on_failure') NULL,
  ADD COLUMN batch_id CHAR(36) CHARACTER SET ascii COLLATE ascii_bin NULL,
  ADD COLUMN batch_callback ENUM('success', 'complete', 'failure') NULL,
  ADD COLUMN parent_failed BOOLEAN NOT NULL DEFAULT FALSE,
  ADD KEY jobs_batch_idx (batch_id);
