-- Debounce and throttle windows (see the PostgreSQL migration of the same number). MySQL has no
-- partial index: every job has an entry, a NULL key for most, which sorts them together.
ALTER TABLE {{jobs}}
  ADD COLUMN window_kind ENUM('debounce', 'throttle') NULL,
  ADD COLUMN window_key VARBINARY(1024) NULL,
  ADD COLUMN window_ends_at DATETIME(3) NULL,
  ADD KEY jobs_window_key_idx (window_key, name);
