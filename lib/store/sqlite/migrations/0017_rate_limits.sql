-- Rate limits: at most `max` starts in any window of `per_ms`, per queue or concurrency key (keyed as
-- concurrency limits are). A limit has `max` rows in rate_starts, each stamped with the time of the
-- last claim that used it, null while unused; a claim uses one only once `per_ms` has passed since,
-- so two uses of a row are a window apart and no window holds more than `max` starts.
CREATE TABLE {{rate_limits}} (
  key TEXT PRIMARY KEY,
  max INTEGER NOT NULL CHECK (max > 0),
  per_ms INTEGER NOT NULL CHECK (per_ms > 0),
  updated_at INTEGER NOT NULL
);
CREATE TABLE {{rate_starts}} (
  key TEXT NOT NULL,
  n INTEGER NOT NULL,
  used_at INTEGER,
  PRIMARY KEY (key, n)
);
CREATE INDEX {{local:rate_starts_used_idx}} ON {{rate_starts}} (key, used_at);
