-- Unique jobs and per-job retry (JSON text of the retry fields set at enqueue).
ALTER TABLE {{jobs}} ADD COLUMN unique_key TEXT;
ALTER TABLE {{jobs}} ADD COLUMN retry TEXT;

-- At most one unfinished job per (wire name, unique key); a job that finishes frees its key.
CREATE UNIQUE INDEX {{local:jobs_unique_key_idx}} ON {{jobs}} (name, unique_key)
  WHERE unique_key IS NOT NULL AND state IN ('scheduled', 'awaiting_parents', 'running');
