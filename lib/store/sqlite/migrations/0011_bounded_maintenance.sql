-- Maintenance that reads what it has to do, not what is retained (see the PostgreSQL migration of
-- the same number for the reasons; SQLite has one writer, so the sweep's lease only spares the
-- other processes the work).

CREATE INDEX {{local:jobs_finished_idx}} ON {{jobs}} (finished_at) WHERE state IN ('succeeded', 'cancelled');
CREATE INDEX {{local:dependencies_parent_idx}} ON {{dependencies}} (parent_id);

CREATE TABLE {{maintenance}} (
  task         TEXT    PRIMARY KEY,
  leased_by    TEXT,
  leased_until INTEGER,
  last_id      INTEGER NOT NULL DEFAULT 0,
  updated_at   INTEGER NOT NULL DEFAULT 0
);

INSERT INTO {{maintenance}} (task, last_id) SELECT 'history_trim', coalesce(max(id), 0) FROM {{job_history}};
INSERT INTO {{maintenance}} (task) VALUES ('sweep');

CREATE INDEX {{local:schedules_created_idx}} ON {{schedules}} (created_at, id);
