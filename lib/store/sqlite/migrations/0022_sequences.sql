-- Sequences (see the PostgreSQL migration of the same number).
ALTER TABLE {{jobs}} ADD COLUMN sequence_key TEXT;
ALTER TABLE {{jobs}} ADD COLUMN sequence_mode TEXT;
ALTER TABLE {{dependencies}} ADD COLUMN sequence TEXT;

CREATE TABLE {{sequences}} (
  key     TEXT PRIMARY KEY,
  tail_id TEXT
);
CREATE INDEX {{local:sequences_tail_idx}} ON {{sequences}} (tail_id);

CREATE INDEX {{local:jobs_sequence_failed_idx}} ON {{jobs}} (sequence_key)
  WHERE sequence_key IS NOT NULL AND state IN ('dead_lettered', 'quarantined');
