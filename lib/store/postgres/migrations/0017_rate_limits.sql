-- Rate limits: at most `max` starts in any window of `per_ms`, per queue or concurrency key (keyed as
-- concurrency limits are). A limit has `max` rows in rate_starts, each stamped with the time of the
-- last claim that used it ('-infinity' while unused). A claim locks a free row (SKIP LOCKED) and
-- stamps it with its now(), and a row is free only once `per_ms` has passed since its stamp, so two
-- uses of a row are a window apart and no window holds more than `max` starts, however many claim.
CREATE TABLE {{rate_limits}} (
  key text PRIMARY KEY,
  max integer NOT NULL CHECK (max > 0),
  per_ms bigint NOT NULL CHECK (per_ms > 0),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE {{rate_starts}} (
  key text NOT NULL,
  n integer NOT NULL,
  used_at timestamptz NOT NULL DEFAULT '-infinity',
  PRIMARY KEY (key, n)
);
CREATE INDEX {{local:rate_starts_used_idx}} ON {{rate_starts}} (key, used_at);
