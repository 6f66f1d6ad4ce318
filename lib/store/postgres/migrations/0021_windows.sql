-- Debounce and throttle windows (docs/debounce-and-throttle.md): the window a job opened at
-- enqueue, its key (scoped to the wire name) and its end. All three are null for other jobs, so
-- adding them rewrites nothing, and those jobs stay out of both indexes. Enqueues of one key are
-- serialized by the unique-key advisory locks; the indexes hold only what a look-up reads, so its
-- cost does not grow with the key's finished jobs.
ALTER TABLE {{jobs}}
  ADD COLUMN window_kind text,
  ADD COLUMN window_key text,
  ADD COLUMN window_ends_at timestamptz;

-- At most one job per (wire name, debounce key) that has not started: the guarantee beneath the
-- lock, as the unique-key index is, for a host transaction whose snapshot predates a holder's commit.
CREATE UNIQUE INDEX {{local:jobs_debounce_idx}} ON {{jobs}} (name, window_key)
  WHERE window_kind = 'debounce' AND state = 'scheduled' AND attempt = 0;

-- A key's throttle windows, by their end.
CREATE INDEX {{local:jobs_throttle_idx}} ON {{jobs}} (name, window_key, window_ends_at) WHERE window_kind = 'throttle';
