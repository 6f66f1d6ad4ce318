-- Debounce and throttle windows (see the PostgreSQL migration of the same number); the end is in
-- epoch milliseconds, as every instant here.
ALTER TABLE {{jobs}} ADD COLUMN window_kind TEXT;
ALTER TABLE {{jobs}} ADD COLUMN window_key TEXT;
ALTER TABLE {{jobs}} ADD COLUMN window_ends_at INTEGER;

CREATE INDEX {{local:jobs_window_key_idx}} ON {{jobs}} (name, window_key) WHERE window_key IS NOT NULL;
