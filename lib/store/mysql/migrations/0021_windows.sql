-- Debounce and throttle windows (see the PostgreSQL migration of the same number). MySQL has no
-- partial index: a generated column holds the debounce key while the job has not started, NULL
-- otherwise, so UNIQUE (name, pending_debounce_key) is PostgreSQL's partial unique index. Every job
-- has an entry in both indexes, a NULL key for most, which sorts them together.
ALTER TABLE {{jobs}}
  ADD COLUMN window_kind ENUM('debounce', 'throttle') NULL,
  ADD COLUMN window_key VARBINARY(1024) NULL,
  ADD COLUMN window_ends_at DATETIME(3) NULL,
  ADD COLUMN pending_debounce_key VARBINARY(1024)
    AS (CASE WHEN window_kind = 'debounce' AND state = 'scheduled' AND attempt = 0 THEN window_key END) VIRTUAL,
  ADD UNIQUE KEY jobs_debounce_idx (name, pending_debounce_key),
  ADD KEY jobs_throttle_idx (window_key, name, window_kind, window_ends_at);
