-- Debounce and throttle windows (see the PostgreSQL migration of the same number); the end is in
-- epoch milliseconds, as every instant here.
ALTER TABLE {{jobs}} ADD COLUMN window_kind TEXT;
ALTER TABLE {{jobs}} ADD COLUMN window_key TEXT;
ALTER TABLE {{jobs}} ADD COLUMN window_ends_at INTEGER;

CREATE UNIQUE INDEX {{local:jobs_debounce_idx}} ON {{jobs}} (name, window_key)
  WHERE window_kind = 'debounce' AND state = 'scheduled' AND attempt = 0;
CREATE INDEX {{local:jobs_throttle_idx}} ON {{jobs}} (name, window_key, window_ends_at) WHERE window_kind = 'throttle';
