-- Unique jobs and per-job retry. Both columns are null for jobs enqueued without them, so adding
-- them rewrites nothing.
ALTER TABLE {{jobs}}
  ADD COLUMN unique_key text,
  -- The retry fields set at enqueue ({"baseDelayMs": 0}, ...), over the handler's policy.
  ADD COLUMN retry jsonb;

-- At most one unfinished job per (wire name, unique key): the guarantee itself, whoever writes. A
-- job leaves the index when it finishes, which frees its key. Jobs without a key are not in it, so
-- they pay only the predicate; `state` already appears in other index predicates, so no update
-- that was HOT stops being HOT. Building it reads the table once, under this migration's lock.
CREATE UNIQUE INDEX {{local:jobs_unique_key_idx}} ON {{jobs}} (name, unique_key)
  WHERE unique_key IS NOT NULL AND state IN ('scheduled', 'awaiting_parents', 'running');
