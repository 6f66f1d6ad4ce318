-- Recurring schedules, the link from a minted job to its schedule, and the operator audit log.

ALTER TABLE {{jobs}} ADD COLUMN schedule_id uuid;

-- The latest occurrences of a schedule (noOverlap asks about the last one).
CREATE INDEX {{local:jobs_schedule_idx}} ON {{jobs}} (schedule_id, scheduled_for DESC) WHERE schedule_id IS NOT NULL;

CREATE TABLE {{schedules}} (
  id               uuid        PRIMARY KEY,
  -- The wire name of the jobs it mints, and what they carry.
  name             text        NOT NULL,
  queue            text        NOT NULL,
  payload          jsonb       NOT NULL,
  max_attempts     integer     NOT NULL,
  -- Either a cron pattern in a time zone, or an interval from an anchor instant.
  cron             text,
  timezone         text,
  interval_ms      bigint,
  anchor_at        timestamptz,
  catch_up         text        NOT NULL DEFAULT 'skip',
  no_overlap       boolean     NOT NULL DEFAULT false,
  misfire_grace_ms integer     NOT NULL DEFAULT 60000,
  state            text        NOT NULL DEFAULT 'active',
  -- Null when the pattern never fires again.
  next_fire_at     timestamptz,
  last_fired_for   timestamptz,
  last_job_id      uuid,
  -- The occurrence whose dead-lettering stopped the schedule.
  halted_job_id    uuid,
  skipped_ticks    bigint      NOT NULL DEFAULT 0,
  last_skipped_for timestamptz,
  last_skip_reason text,
  created_at       timestamptz NOT NULL DEFAULT now(),
  updated_at       timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT {{local:schedules_state_check}} CHECK (state IN ('active', 'paused', 'dead_lettered')),
  CONSTRAINT {{local:schedules_catch_up_check}} CHECK (catch_up IN ('skip', 'coalesce')),
  CONSTRAINT {{local:schedules_timing_check}} CHECK ((cron IS NULL) <> (interval_ms IS NULL))
);

CREATE INDEX {{local:schedules_due_idx}} ON {{schedules}} (next_fire_at) WHERE state = 'active';

CREATE TABLE {{audit_log}} (
  id     bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  at     timestamptz NOT NULL DEFAULT now(),
  actor  text        NOT NULL,
  action text        NOT NULL,
  target text        NOT NULL,
  detail jsonb
);
