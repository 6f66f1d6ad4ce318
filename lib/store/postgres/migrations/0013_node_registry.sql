-- The node registry: one row per worker node (its worker id), so operators, health checks and
-- metrics can see every node that runs or ran lately. Each node upserts its row on its heartbeat
-- cadence (node-beat.query.ts) with the database's clock, marks it stopped on a graceful stop, and
-- the maintenance sweep deletes rows not seen for the retention (prune-nodes.query.ts).
CREATE TABLE {{nodes}} (
  id           text        PRIMARY KEY,
  host         text        NOT NULL,
  pid          integer     NOT NULL,
  version      text        NOT NULL,
  queues       text[]      NOT NULL,
  concurrency  integer     NOT NULL,
  running      integer     NOT NULL,
  started_at   timestamptz NOT NULL,
  last_seen_at timestamptz NOT NULL,
  stopped_at   timestamptz
);

-- Serves both reads of the registry: the listing reads it backwards (most recently seen first) and
-- stops at its page, the prune reads it forwards and stops at its batch. Every beat moves its row
-- in this index (no HOT update), which at one beat per node per heartbeat interval costs nothing
-- worth saving.
CREATE INDEX {{local:nodes_seen_idx}} ON {{nodes}} (last_seen_at, id);
