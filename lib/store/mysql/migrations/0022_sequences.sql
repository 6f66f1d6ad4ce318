-- Sequences (see the PostgreSQL migration of the same number). The keys are VARBINARY like the
-- other keys a caller chooses (0019 says why). MySQL has no partial index: a generated column holds
-- the sequence key while the job is dead-lettered or quarantined, NULL otherwise, and its index
-- serves the blocked-sequences listing, in key order. The new columns are NULL for other jobs and edges.
-- The table first: it is created only if missing, so a run cut short after it runs again.
CREATE TABLE IF NOT EXISTS {{sequences}} (
  `key`    VARBINARY(1024) NOT NULL,
  -- The job the key's next enqueue runs after; its row is the lock that orders enqueues of the key.
  tail_id  CHAR(36) CHARACTER SET ascii COLLATE ascii_bin NULL,
  PRIMARY KEY (`key`),
  -- Retention deletes a sequence's row with its tail, found by this index.
  KEY sequences_tail_idx (tail_id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

ALTER TABLE {{dependencies}} ADD COLUMN sequence ENUM('block', 'continue') NULL;

ALTER TABLE {{jobs}}
  ADD COLUMN sequence_key VARBINARY(1024) NULL,
  ADD COLUMN sequence_mode ENUM('block', 'continue') NULL,
  ADD COLUMN failed_sequence_key VARBINARY(1024)
    AS (CASE WHEN state IN ('dead_lettered', 'quarantined') THEN sequence_key END) VIRTUAL,
  ADD KEY jobs_sequence_failed_idx (failed_sequence_key, finished_at, id);
