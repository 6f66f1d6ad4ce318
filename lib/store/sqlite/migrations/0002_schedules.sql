-- Recurring schedules, the link from a minted job to its schedule, and the operator audit log.

ALTER TABLE {{jobs}} ADD COLUMN schedule_id TEXT;

CREATE INDEX {{local:jobs_schedule_idx}} ON {{jobs}} (schedule_id, scheduled_for DESC) WHERE schedule_id IS NOT NULL;

CREATE TABLE {{schedules}} (
  id               TEXT    PRIMARY KEY,
  name             TEXT    NOT NULL,
  queue            TEXT    NOT NULL,
  payload          TEXT    NOT NULL,
  max_attempts     INTEGER NOT NULL,
  cron             TEXT,
  timezone         TEXT,
  interval_ms      INTEGER,
  anchor_at        INTEGER,
  catch_up         TEXT    NOT NULL DEFAULT 'skip' CHECK (catch_up IN ('skip', 'coalesce')),
  no_overlap       INTEGER NOT NULL DEFAULT 0,
  misfire_grace_ms INTEGER NOT NULL DEFAULT 60000,
  state            TEXT    NOT NULL DEFAULT 'active' CHECK (state IN ('active', 'paused', 'dead_lettered')),
  next_fire_at     INTEGER,
  last_fired_for   INTEGER,
  last_job_id      TEXT,
  halted_job_id    TEXT,
  skipped_ticks    INTEGER NOT NULL DEFAULT 0,
  last_skipped_for INTEGER,
  last_skip_reason TEXT,
  created_at       INTEGER NOT NULL,
  updated_at       INTEGER NOT NULL,
  CHECK ((cron IS NULL) <> (interval_ms IS NULL))
);

CREATE INDEX {{local:schedules_due_idx}} ON {{schedules}} (next_fire_at) WHERE state = 'active';

CREATE TABLE {{audit_log}} (
  id     INTEGER PRIMARY KEY,
  at     INTEGER NOT NULL,
  actor  TEXT    NOT NULL,
  action TEXT    NOT NULL,
  target TEXT    NOT NULL,
  detail TEXT
);
