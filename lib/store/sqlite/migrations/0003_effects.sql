-- Dependencies, concurrency limits, the transition history and observer cursors. The triggers
-- that apply effects are installed by the store on every migrate (see sqlite-effects.ts).

ALTER TABLE {{jobs}} ADD COLUMN pending_parents INTEGER NOT NULL DEFAULT 0;
ALTER TABLE {{jobs}} ADD COLUMN dependency_mode TEXT CHECK (dependency_mode IS NULL OR dependency_mode IN ('on_success', 'on_any_terminal'));
ALTER TABLE {{jobs}} ADD COLUMN concurrency_key TEXT;

-- Running jobs per key and per queue, for limits (SQLite has one writer, so it counts instead of using slots).
CREATE INDEX {{local:jobs_running_key_idx}} ON {{jobs}} (concurrency_key) WHERE state = 'running';
CREATE INDEX {{local:jobs_running_queue_idx}} ON {{jobs}} (queue) WHERE state = 'running';

CREATE TABLE {{dependencies}} (
  child_id  TEXT    NOT NULL,
  parent_id TEXT    NOT NULL,
  settled   INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (child_id, parent_id)
);
CREATE INDEX {{local:dependencies_open_idx}} ON {{dependencies}} (parent_id) WHERE settled = 0;

CREATE TABLE {{concurrency_limits}} (
  key        TEXT    PRIMARY KEY,
  max        INTEGER NOT NULL CHECK (max >= 1),
  updated_at INTEGER NOT NULL
);

CREATE TABLE {{job_history}} (
  id      INTEGER PRIMARY KEY AUTOINCREMENT, -- never reused: ids are event ids and observer cursors
  job_id  TEXT    NOT NULL,
  name    TEXT    NOT NULL,
  at      INTEGER NOT NULL,
  state   TEXT    NOT NULL,
  attempt INTEGER NOT NULL,
  error   TEXT
);
CREATE INDEX {{local:job_history_job_idx}} ON {{job_history}} (job_id, id);

CREATE TABLE {{observer_cursors}} (
  observer     TEXT    PRIMARY KEY,
  last_id      INTEGER NOT NULL DEFAULT 0,
  leased_by    TEXT,
  leased_until INTEGER,
  failures     INTEGER NOT NULL DEFAULT 0,
  retry_at     INTEGER,
  last_error   TEXT,
  updated_at   INTEGER NOT NULL
);
