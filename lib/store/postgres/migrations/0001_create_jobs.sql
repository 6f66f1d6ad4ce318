-- Jobs and queues. Placeholders in double braces are replaced with validated, quoted names.

CREATE TABLE {{jobs}} (
  id               uuid        PRIMARY KEY,
  -- Enqueue order: claims take jobs by run_at, then this.
  seq              bigint      GENERATED ALWAYS AS IDENTITY,
  name             text        NOT NULL,
  queue            text        NOT NULL,
  payload          jsonb       NOT NULL,
  state            text        NOT NULL DEFAULT 'scheduled',
  run_at           timestamptz NOT NULL,
  -- The instant this occurrence was meant to fire; the occurrence id derives from it.
  scheduled_for    timestamptz NOT NULL,
  attempt          integer     NOT NULL DEFAULT 0,
  max_attempts     integer     NOT NULL,
  worker_id        text,
  leased_until     timestamptz,
  cancel_requested boolean     NOT NULL DEFAULT false,
  last_error       text,
  output           jsonb,
  created_at       timestamptz NOT NULL DEFAULT now(),
  updated_at       timestamptz NOT NULL DEFAULT now(),
  finished_at      timestamptz,
  CONSTRAINT {{local:jobs_state_check}} CHECK (state IN
    ('scheduled', 'awaiting_parents', 'running', 'succeeded', 'dead_lettered', 'cancelled', 'quarantined')),
  CONSTRAINT {{local:jobs_attempt_check}} CHECK (attempt >= 0 AND attempt <= max_attempts AND max_attempts >= 1),
  CONSTRAINT {{local:jobs_lease_check}} CHECK ((state = 'running') = (leased_until IS NOT NULL))
);

-- Due work, in claim order. Partial, so finished jobs cost this index nothing, and ordered by
-- run_at, so a million future-dated jobs sit past the point where a claim stops reading.
CREATE INDEX {{local:jobs_claim_idx}} ON {{jobs}} (run_at, seq) WHERE state = 'scheduled';

-- Running jobs, for reclaiming and sweeping lapsed leases. It deliberately leaves leased_until out,
-- so a heartbeat changes no indexed column and can be a HOT update.
CREATE INDEX {{local:jobs_running_idx}} ON {{jobs}} (run_at, seq) WHERE state = 'running';

-- The dead-letter listing, newest first.
CREATE INDEX {{local:jobs_dead_letter_idx}} ON {{jobs}} (finished_at DESC, seq DESC) WHERE state = 'dead_lettered';

CREATE TABLE {{queues}} (
  name       text        PRIMARY KEY,
  paused     boolean     NOT NULL DEFAULT false,
  updated_at timestamptz NOT NULL DEFAULT now()
);
