-- The node registry (see the PostgreSQL migration of the same number). Instants are epoch
-- milliseconds of the database's clock, queues a JSON array of names.
CREATE TABLE {{nodes}} (
  id           TEXT    PRIMARY KEY,
  host         TEXT    NOT NULL,
  pid          INTEGER NOT NULL,
  version      TEXT    NOT NULL,
  queues       TEXT    NOT NULL,
  concurrency  INTEGER NOT NULL,
  running      INTEGER NOT NULL,
  started_at   INTEGER NOT NULL,
  last_seen_at INTEGER NOT NULL,
  stopped_at   INTEGER
);

CREATE INDEX {{local:nodes_seen_idx}} ON {{nodes}} (last_seen_at, id);
