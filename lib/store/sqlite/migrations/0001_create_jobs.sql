-- Jobs and queues. Instants are integer milliseconds since the Unix epoch; JSON is kept as text.
-- Placeholders in double braces are replaced with validated, quoted names.

CREATE TABLE {{jobs}} (
  -- The rowid doubles as enqueue order: claims take jobs by run_at, then seq.
  seq              INTEGER PRIMARY KEY,
  id               TEXT    NOT NULL UNIQUE,
  name             TEXT    NOT NULL,
  queue            TEXT    NOT NULL,
  payload          TEXT    NOT NULL,
  state            TEXT    NOT NULL DEFAULT 'scheduled' CHECK (state IN
    ('scheduled', 'awaiting_parents', 'running', 'succeeded', 'dead_lettered', 'cancelled', 'quarantined')),
  run_at           INTEGER NOT NULL,
  scheduled_for    INTEGER NOT NULL,
  attempt          INTEGER NOT NULL DEFAULT 0,
  max_attempts     INTEGER NOT NULL,
  worker_id        TEXT,
  leased_until     INTEGER,
  cancel_requested INTEGER NOT NULL DEFAULT 0,
  last_error       TEXT,
  output           TEXT,
  created_at       INTEGER NOT NULL,
  updated_at       INTEGER NOT NULL,
  finished_at      INTEGER,
  CHECK (attempt >= 0 AND attempt <= max_attempts AND max_attempts >= 1),
  CHECK ((state = 'running') = (leased_until IS NOT NULL))
);

CREATE INDEX {{local:jobs_claim_idx}} ON {{jobs}} (run_at, seq) WHERE state = 'scheduled';
CREATE INDEX {{local:jobs_running_idx}} ON {{jobs}} (run_at, seq) WHERE state = 'running';
CREATE INDEX {{local:jobs_dead_letter_idx}} ON {{jobs}} (finished_at DESC, seq DESC) WHERE state = 'dead_lettered';

CREATE TABLE {{queues}} (
  name       TEXT    PRIMARY KEY,
  paused     INTEGER NOT NULL DEFAULT 0,
  updated_at INTEGER NOT NULL
);
