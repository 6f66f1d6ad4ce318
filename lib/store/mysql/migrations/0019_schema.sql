-- The whole schema as of version 19, in one migration: the MySQL store began at the version the
-- PostgreSQL and SQLite stores had reached, so it has no history of its own to replay.
--
-- MySQL commits each DDL statement on its own, so a migration cannot be rolled back as a whole.
-- Every statement here is written to be run again (IF NOT EXISTS), and the migration is recorded
-- only after its last statement: a node that dies half-way leaves what it made, and the next one
-- to migrate makes the rest.
--
-- Conventions (docs/stores.md, MySQL):
-- * Instants are DATETIME(3) holding UTC, written from UTC_TIMESTAMP(3) or from UTC text.
-- * Ids are UUID text in ascii_bin; names are ASCII wire names in ascii_bin; free text is utf8mb4
--   with the binary collation, so 'Queue' and 'queue' are two names and 4-byte characters keep.
-- * Keys a caller writes freely (concurrency and unique keys, observer, worker and task names) are
--   VARBINARY, their UTF-8 bytes: the _bin collations ignore trailing spaces when they compare
--   (PAD SPACE), which would make 'tenant' and 'tenant ' one key. Bytes compare exactly, and sort
--   in code point order, as PostgreSQL's C collation does.
-- * JSON is kept as its text in LONGTEXT (MariaDB's JSON type is LONGTEXT too); the store
--   validates it before writing and never asks the server to parse it on the hot path.
-- * A partial index becomes a generated column that is NULL outside the predicate, indexed (a
--   UNIQUE index allows any number of NULLs).

CREATE TABLE IF NOT EXISTS {{jobs}} (
  seq               BIGINT NOT NULL AUTO_INCREMENT,
  id                CHAR(36) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  name              VARCHAR(255) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  queue             VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  payload           LONGTEXT NOT NULL,
  state             ENUM('scheduled', 'awaiting_parents', 'running', 'succeeded', 'dead_lettered', 'cancelled', 'quarantined') NOT NULL DEFAULT 'scheduled',
  run_at            DATETIME(3) NOT NULL,
  scheduled_for     DATETIME(3) NOT NULL,
  attempt           INT NOT NULL DEFAULT 0,
  max_attempts      INT NOT NULL,
  worker_id         VARCHAR(256) NULL,
  leased_until      DATETIME(3) NULL,
  cancel_requested  BOOLEAN NOT NULL DEFAULT FALSE,
  last_error        MEDIUMTEXT NULL,
  output            LONGTEXT NULL,
  created_at        DATETIME(3) NOT NULL,
  updated_at        DATETIME(3) NOT NULL,
  finished_at       DATETIME(3) NULL,
  schedule_id       CHAR(36) CHARACTER SET ascii COLLATE ascii_bin NULL,
  pending_parents   INT NOT NULL DEFAULT 0,
  dependency_mode   ENUM('on_success', 'on_any_terminal') NULL,
  concurrency_key   VARBINARY(1024) NULL,
  unique_key        VARBINARY(1024) NULL,
  retry             TEXT NULL,
  traceparent       VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NULL,
  tracestate        VARCHAR(512) CHARACTER SET ascii COLLATE ascii_bin NULL,
  priority          SMALLINT NOT NULL DEFAULT 0,
  progress          TEXT NULL,
  parked_key        VARBINARY(1024) NULL,
  -- The unique key while the job is live, NULL once it is terminal: UNIQUE (name, live_unique_key)
  -- is PostgreSQL's partial unique index.
  live_unique_key   VARBINARY(1024) AS (CASE WHEN state IN ('scheduled', 'awaiting_parents', 'running') THEN unique_key END) VIRTUAL,
  -- A parked (held-back) job's run time, NULL for every other job: PostgreSQL's partial jobs_parked_due_idx.
  parked_due_at     DATETIME(3) AS (CASE WHEN state = 'scheduled' AND parked_key IS NOT NULL THEN run_at END) VIRTUAL,
  PRIMARY KEY (seq),
  UNIQUE KEY jobs_id_idx (id),
  -- The claim: equality on state and on parked_key IS NULL, then priority, run time, enqueue order.
  KEY jobs_claim_idx (state, parked_key, priority, run_at, seq),
  -- Held-back lanes: a parked key's due jobs in claim order, per queue.
  KEY jobs_lane_idx (state, queue, parked_key, priority, run_at, seq),
  KEY jobs_lease_idx (state, leased_until),
  -- A limited claim counts the jobs running under a concurrency key.
  KEY jobs_running_key_idx (state, concurrency_key, leased_until),
  KEY jobs_finished_idx (state, finished_at, seq, queue),
  KEY jobs_parked_due_idx (parked_due_at, seq),
  KEY jobs_schedule_idx (schedule_id, scheduled_for),
  UNIQUE KEY jobs_unique_key_idx (name, live_unique_key),
  CONSTRAINT jobs_attempt_check CHECK (attempt >= 0 AND attempt <= max_attempts AND max_attempts >= 1),
  CONSTRAINT jobs_lease_check CHECK ((state = 'running') = (leased_until IS NOT NULL)),
  CONSTRAINT jobs_priority_check CHECK (priority BETWEEN -10 AND 10)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

CREATE TABLE IF NOT EXISTS {{queues}} (
  name        VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  paused      BOOLEAN NOT NULL DEFAULT FALSE,
  updated_at  DATETIME(3) NOT NULL,
  PRIMARY KEY (name)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

CREATE TABLE IF NOT EXISTS {{dependencies}} (
  child_id   CHAR(36) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  parent_id  CHAR(36) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  settled    BOOLEAN NOT NULL DEFAULT FALSE,
  PRIMARY KEY (child_id, parent_id),
  KEY dependencies_parent_idx (parent_id, settled),
  -- The sweep's way to the open edges of any parent, when a write left some for it.
  KEY dependencies_open_idx (settled, parent_id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

CREATE TABLE IF NOT EXISTS {{schedules}} (
  id                CHAR(36) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  name              VARCHAR(255) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  queue             VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  payload           LONGTEXT NOT NULL,
  max_attempts      INT NOT NULL,
  cron              VARCHAR(255) NULL,
  timezone          VARCHAR(64) NULL,
  interval_ms       BIGINT NULL,
  anchor_at         DATETIME(3) NULL,
  catch_up          ENUM('skip', 'coalesce') NOT NULL DEFAULT 'skip',
  no_overlap        BOOLEAN NOT NULL DEFAULT FALSE,
  misfire_grace_ms  INT NOT NULL DEFAULT 60000,
  state             ENUM('active', 'paused', 'dead_lettered') NOT NULL DEFAULT 'active',
  next_fire_at      DATETIME(3) NULL,
  last_fired_for    DATETIME(3) NULL,
  last_job_id       CHAR(36) CHARACTER SET ascii COLLATE ascii_bin NULL,
  halted_job_id     CHAR(36) CHARACTER SET ascii COLLATE ascii_bin NULL,
  skipped_ticks     BIGINT NOT NULL DEFAULT 0,
  last_skipped_for  DATETIME(3) NULL,
  last_skip_reason  VARCHAR(255) NULL,
  created_at        DATETIME(3) NOT NULL,
  updated_at        DATETIME(3) NOT NULL,
  traceparent       VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NULL,
  tracestate        VARCHAR(512) CHARACTER SET ascii COLLATE ascii_bin NULL,
  PRIMARY KEY (id),
  KEY schedules_due_idx (state, next_fire_at),
  KEY schedules_created_idx (created_at, id),
  CONSTRAINT schedules_timing_check CHECK ((cron IS NULL) <> (interval_ms IS NULL))
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

CREATE TABLE IF NOT EXISTS {{audit_log}} (
  id      BIGINT NOT NULL AUTO_INCREMENT,
  at      DATETIME(3) NOT NULL,
  actor   VARCHAR(200) NOT NULL,
  action  VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  target  VARCHAR(512) NOT NULL,
  detail  TEXT NULL,
  PRIMARY KEY (id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

-- A concurrency limit. A claim counts the jobs that run under the limit's key with a live lease,
-- with the limit's row locked, so claims of one key take turns and each counts the last one's
-- jobs; no slot rows are kept (docs/stores.md, MySQL, "Limits"). `pending`: declared at enqueue,
-- in effect once a transaction of the store's own has marked it under the limits lock.
CREATE TABLE IF NOT EXISTS {{concurrency_limits}} (
  `key`       VARBINARY(1024) NOT NULL,
  max         INT NOT NULL,
  pending     BOOLEAN NOT NULL DEFAULT FALSE,
  updated_at  DATETIME(3) NOT NULL,
  PRIMARY KEY (`key`),
  KEY concurrency_limits_pending_idx (pending),
  CONSTRAINT concurrency_limits_max_check CHECK (max >= 1)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

CREATE TABLE IF NOT EXISTS {{rate_limits}} (
  `key`       VARBINARY(1024) NOT NULL,
  max         INT NOT NULL,
  per_ms      BIGINT NOT NULL,
  updated_at  DATETIME(3) NOT NULL,
  PRIMARY KEY (`key`),
  CONSTRAINT rate_limits_max_check CHECK (max > 0),
  CONSTRAINT rate_limits_per_ms_check CHECK (per_ms > 0)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

CREATE TABLE IF NOT EXISTS {{rate_starts}} (
  `key`    VARBINARY(1024) NOT NULL,
  n        INT NOT NULL,
  used_at  DATETIME(3) NOT NULL DEFAULT '1000-01-01 00:00:00.000',
  PRIMARY KEY (`key`, n),
  KEY rate_starts_used_idx (`key`, used_at)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

-- History. `id` is the order entries were written in, which is not the order they commit in (an
-- AUTO_INCREMENT value is taken at INSERT, and transactions commit in any order), so readers that
-- follow the log (observers, the trim) follow `pos` instead: NULL when written, and numbered after
-- commit by whichever reader comes first, one reader at a time, in a transaction that takes only
-- committed entries (SKIP LOCKED passes over the ones still being written). A reader that has seen
-- position P has seen every position below it (docs/stores.md, MySQL, "History order").
CREATE TABLE IF NOT EXISTS {{job_history}} (
  id       BIGINT NOT NULL AUTO_INCREMENT,
  pos      BIGINT NULL,
  job_id   CHAR(36) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  name     VARCHAR(255) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  at       DATETIME(3) NOT NULL,
  state    ENUM('scheduled', 'awaiting_parents', 'running', 'succeeded', 'dead_lettered', 'cancelled', 'quarantined') NOT NULL,
  attempt  INT NOT NULL,
  error    MEDIUMTEXT NULL,
  PRIMARY KEY (id),
  -- The entries still without a position come first, in id order, for the sequencer.
  KEY job_history_pos_idx (pos, id),
  KEY job_history_job_idx (job_id, id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

CREATE TABLE IF NOT EXISTS {{observer_cursors}} (
  observer      VARBINARY(1024) NOT NULL,
  -- The last history position (job_history.pos) delivered.
  last_id       BIGINT NOT NULL DEFAULT 0,
  leased_by     VARCHAR(256) NULL,
  leased_until  DATETIME(3) NULL,
  failures      INT NOT NULL DEFAULT 0,
  retry_at      DATETIME(3) NULL,
  last_error    MEDIUMTEXT NULL,
  updated_at    DATETIME(3) NOT NULL,
  -- JSON arrays of the states and job names the observer follows; NULL follows everything.
  states        TEXT NULL,
  jobs          MEDIUMTEXT NULL,
  PRIMARY KEY (observer)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

CREATE TABLE IF NOT EXISTS {{maintenance}} (
  task          VARBINARY(256) NOT NULL,
  leased_by     VARCHAR(256) NULL,
  leased_until  DATETIME(3) NULL,
  -- The trim's place in the log: a history position (job_history.pos).
  last_id       BIGINT NOT NULL DEFAULT 0,
  updated_at    DATETIME(3) NOT NULL,
  PRIMARY KEY (task)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

-- Stored jobs per (queue, state), as of the last fold, and what writes changed since: a write
-- appends its change instead of updating one hot row that every claimer would queue on.
CREATE TABLE IF NOT EXISTS {{job_counts}} (
  queue  VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  state  ENUM('scheduled', 'awaiting_parents', 'running', 'succeeded', 'dead_lettered', 'cancelled', 'quarantined') NOT NULL,
  count  BIGINT NOT NULL,
  PRIMARY KEY (queue, state)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

CREATE TABLE IF NOT EXISTS {{job_count_deltas}} (
  id     BIGINT NOT NULL AUTO_INCREMENT,
  queue  VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  state  ENUM('scheduled', 'awaiting_parents', 'running', 'succeeded', 'dead_lettered', 'cancelled', 'quarantined') NOT NULL,
  delta  BIGINT NOT NULL,
  PRIMARY KEY (id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

CREATE TABLE IF NOT EXISTS {{nodes}} (
  id            VARBINARY(1024) NOT NULL,
  host          VARCHAR(255) NOT NULL,
  pid           INT NOT NULL,
  version       VARCHAR(64) NOT NULL,
  -- A JSON array of queue names.
  queues        TEXT NOT NULL,
  concurrency   INT NOT NULL,
  running       INT NOT NULL,
  started_at    DATETIME(3) NOT NULL,
  last_seen_at  DATETIME(3) NOT NULL,
  stopped_at    DATETIME(3) NULL,
  finish        VARCHAR(16) CHARACTER SET ascii COLLATE ascii_bin NULL,
  PRIMARY KEY (id),
  KEY nodes_seen_idx (last_seen_at, id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

-- Transaction-scoped locks by name, which MySQL lacks (GET_LOCK belongs to a session, and a host
-- transaction's session is the application's): a writer locks a row here with INSERT ... ON
-- DUPLICATE KEY UPDATE, held until its transaction ends. Names hash into a fixed number of rows
-- per space, so the table never grows; two names that share a row only take turns.
CREATE TABLE IF NOT EXISTS {{locks}} (
  space   VARCHAR(16) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  bucket  INT NOT NULL,
  PRIMARY KEY (space, bucket)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

-- The limits lock (mysql-limits.ts): claims read it shared, limit changes take it exclusive.
INSERT INTO {{locks}} (space, bucket) VALUES ('limits', 0) ON DUPLICATE KEY UPDATE bucket = bucket;

-- The parent guard's rows (mysql-locks.ts), written once so that a shared lock always finds its row.
INSERT INTO {{locks}} (space, bucket)
SELECT 'parent', a.n * 256 + b.n * 16 + c.n
FROM (SELECT 0 AS n UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7
      UNION ALL SELECT 8 UNION ALL SELECT 9 UNION ALL SELECT 10 UNION ALL SELECT 11 UNION ALL SELECT 12 UNION ALL SELECT 13 UNION ALL SELECT 14 UNION ALL SELECT 15) a,
     (SELECT 0 AS n UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7
      UNION ALL SELECT 8 UNION ALL SELECT 9 UNION ALL SELECT 10 UNION ALL SELECT 11 UNION ALL SELECT 12 UNION ALL SELECT 13 UNION ALL SELECT 14 UNION ALL SELECT 15) b,
     (SELECT 0 AS n UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7
      UNION ALL SELECT 8 UNION ALL SELECT 9 UNION ALL SELECT 10 UNION ALL SELECT 11 UNION ALL SELECT 12 UNION ALL SELECT 13 UNION ALL SELECT 14 UNION ALL SELECT 15) c
ON DUPLICATE KEY UPDATE bucket = {{locks}}.bucket;
