-- Maintenance that reads what it has to do, not what is retained.

-- Finished jobs the retention purge may delete, oldest first. Without it the purge read every
-- retained job to find the few past retention (about a second per sweep at three million). It
-- costs one index entry per job that finishes; jobs that wait or run are not in it.
CREATE INDEX {{local:jobs_finished_idx}} ON {{jobs}} (finished_at) WHERE state IN ('succeeded', 'cancelled');

-- The purge deletes a finished parent's edges by parent; the open-edge index holds only the edges
-- still to settle, so without this one that delete read the whole edge table.
CREATE INDEX {{local:dependencies_parent_idx}} ON {{dependencies}} (parent_id);

-- One row per maintenance task. `leased_by` / `leased_until`: the node that runs the sweep this
-- interval, so one node sweeps at a time instead of every node every interval. `last_tx` /
-- `last_id`: how far along the history log the trim has looked, so each pass reads only the
-- entries written since, in (tx, id) order, as observers read them.
CREATE TABLE {{maintenance}} (
  task         text        PRIMARY KEY,
  leased_by    text,
  leased_until timestamptz,
  last_tx      xid8        NOT NULL DEFAULT '0',
  last_id      bigint      NOT NULL DEFAULT 0,
  updated_at   timestamptz NOT NULL DEFAULT now()
);

-- The hourly trim this replaces went over the whole history, so an existing log is trimmed up to
-- about an hour ago: the new trim starts at its end (read through the primary key, not a scan).
INSERT INTO {{maintenance}} (task, last_tx, last_id)
SELECT 'history_trim', coalesce(h.tx, '0'), coalesce(h.id, 0)
FROM (SELECT 1) AS one LEFT JOIN LATERAL (SELECT tx, id FROM {{job_history}} ORDER BY tx DESC, id DESC LIMIT 1) h ON true;
INSERT INTO {{maintenance}} (task) VALUES ('sweep');

-- Schedules are listed oldest first in pages; this index reads a page in order and stops at its size.
CREATE INDEX {{local:schedules_created_idx}} ON {{schedules}} (created_at, id);
