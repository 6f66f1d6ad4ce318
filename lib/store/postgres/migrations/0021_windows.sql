-- Debounce and throttle windows (docs/debounce-and-throttle.md): the window a job opened at
-- enqueue, its key (scoped to the wire name) and its end. All three are null for other jobs, so
-- adding them rewrites nothing, and those jobs stay out of the index. Enqueues of one key are
-- serialized by the unique-key advisory locks, so the index need not be unique.
ALTER TABLE {{jobs}}
  ADD COLUMN window_kind text,
  ADD COLUMN window_key text,
  ADD COLUMN window_ends_at timestamptz;

CREATE INDEX {{local:jobs_window_key_idx}} ON {{jobs}} (name, window_key) WHERE window_key IS NOT NULL;
