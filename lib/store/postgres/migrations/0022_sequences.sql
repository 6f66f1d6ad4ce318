-- Sequences (docs/sequences.md): jobs of one sequence key run one at a time, in enqueue order.
-- Each job of a sequence waits for the one before it through an edge of the dependencies table,
-- marked with the waiting job's afterFailure; the sequences table holds each key's tail, the job
-- the key's next enqueue runs after, and its row is the lock that orders concurrent enqueues of
-- the key. The new columns are null for other jobs and edges, so adding them rewrites nothing.
ALTER TABLE {{jobs}}
  ADD COLUMN sequence_key text,
  ADD COLUMN sequence_mode text;

ALTER TABLE {{dependencies}} ADD COLUMN sequence text;

CREATE TABLE {{sequences}} (
  key     text PRIMARY KEY,
  tail_id uuid
);

-- The failed jobs that may hold a sequence, for the blocked-sequences listing.
CREATE INDEX {{local:jobs_sequence_failed_idx}} ON {{jobs}} (sequence_key)
  WHERE sequence_key IS NOT NULL AND state IN ('dead_lettered', 'quarantined');

-- Retention deletes a sequence's row with its tail, found by this index.
CREATE INDEX {{local:sequences_tail_idx}} ON {{sequences}} (tail_id);
