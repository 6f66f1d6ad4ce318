-- Dependencies, concurrency limits, the transition history and observer cursors.
-- The triggers that apply effects are installed by the store on every migrate (see
-- postgres-effects.ts), because their body depends on the history policy.

ALTER TABLE {{jobs}}
  ADD COLUMN pending_parents integer NOT NULL DEFAULT 0,
  ADD COLUMN dependency_mode text,
  ADD COLUMN concurrency_key text,
  ADD CONSTRAINT {{local:jobs_dependency_mode_check}} CHECK (dependency_mode IS NULL OR dependency_mode IN ('on_success', 'on_any_terminal'));

-- Static edges, set at enqueue. Each edge is settled at most once, so a latch never moves twice.
CREATE TABLE {{dependencies}} (
  child_id  uuid    NOT NULL,
  parent_id uuid    NOT NULL,
  settled   boolean NOT NULL DEFAULT false,
  PRIMARY KEY (child_id, parent_id)
);
CREATE INDEX {{local:dependencies_open_idx}} ON {{dependencies}} (parent_id) WHERE NOT settled;

-- Limits by key: `queue:<name>` caps a queue, `key:<concurrency key>` caps a key.
CREATE TABLE {{concurrency_limits}} (
  key        text        PRIMARY KEY,
  max        integer     NOT NULL CHECK (max >= 1),
  updated_at timestamptz NOT NULL DEFAULT now()
);

-- One row per slot of a limit. A claim takes free slots with SKIP LOCKED, so concurrent claimers
-- never share one. The slot carries its holder's lease (renewed by heartbeats; '-infinity' when
-- free), so whether it is free is decided by the slot row alone: a claim that re-checks a slot
-- another claimer just took sees the new holder, never a stale view of the holder's job row. The
-- (key, held_until) index finds a free slot without walking the held ones.
CREATE TABLE {{concurrency_slots}} (
  key        text        NOT NULL,
  slot       integer     NOT NULL,
  job_id     uuid,
  held_until timestamptz NOT NULL DEFAULT '-infinity',
  PRIMARY KEY (key, slot)
);
CREATE INDEX {{local:concurrency_slots_job_idx}} ON {{concurrency_slots}} (job_id) WHERE job_id IS NOT NULL;
CREATE INDEX {{local:concurrency_slots_free_idx}} ON {{concurrency_slots}} (key, held_until);

-- Ids are handed out before commit, so a transaction can commit an entry with a lower id after one
-- with a higher id was already read. Observers therefore read in (tx, id) order, and only entries
-- whose transaction is older than every transaction still running: nothing can land behind them.
CREATE TABLE {{job_history}} (
  id      bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  tx      xid8        NOT NULL DEFAULT pg_current_xact_id(),
  job_id  uuid        NOT NULL,
  name    text        NOT NULL,
  at      timestamptz NOT NULL DEFAULT now(),
  state   text        NOT NULL,
  attempt integer     NOT NULL,
  error   text
);
CREATE INDEX {{local:job_history_job_idx}} ON {{job_history}} (job_id, id);
CREATE INDEX {{local:job_history_delivery_idx}} ON {{job_history}} (tx, id);

-- Where each transition observer has got to in the history, and who is delivering for it.
CREATE TABLE {{observer_cursors}} (
  observer     text        PRIMARY KEY,
  last_tx      xid8        NOT NULL DEFAULT '0',
  last_id      bigint      NOT NULL DEFAULT 0,
  leased_by    text,
  leased_until timestamptz,
  failures     integer     NOT NULL DEFAULT 0,
  retry_at     timestamptz,
  last_error   text,
  updated_at   timestamptz NOT NULL DEFAULT now()
);
