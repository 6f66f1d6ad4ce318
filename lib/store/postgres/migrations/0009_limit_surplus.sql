-- Every job that runs under a capped queue or key holds one slot row of that cap, whenever the cap
-- was set: a cap set while jobs run is provisioned with a slot for each of them, and lowering a cap
-- no longer retires slots above the max. Instead `surplus` counts the slot rows beyond the max
-- (left by lowering the cap, or by setting it, while more jobs ran than it allows), and a claim
-- takes a free slot only beyond that many. So the free room is always the max minus the jobs that
-- run, however they started. A job that stops while there is surplus deletes its row when it can,
-- bringing the rows back to the max. `pending` marks a cap declared at enqueue whose slots are not
-- provisioned yet: its jobs wait until the next claim provisions them (postgres-limits.ts).
ALTER TABLE {{concurrency_limits}}
  ADD COLUMN surplus integer NOT NULL DEFAULT 0,
  ADD COLUMN pending boolean NOT NULL DEFAULT false,
  ADD CONSTRAINT {{local:concurrency_limits_surplus_check}} CHECK (surplus >= 0);
CREATE INDEX {{local:concurrency_limits_surplus_idx}} ON {{concurrency_limits}} (key) WHERE surplus > 0;
CREATE INDEX {{local:concurrency_limits_pending_idx}} ON {{concurrency_limits}} (key) WHERE pending;

-- Retired slots (held_until 'infinity', version 5) become held slots carrying their job's lease;
-- those whose job no longer runs go.
DELETE FROM {{concurrency_slots}} s WHERE s.held_until = 'infinity'
  AND NOT EXISTS (SELECT 1 FROM {{jobs}} j WHERE j.id = s.job_id AND j.state = 'running' AND j.leased_until > now());
UPDATE {{concurrency_slots}} s SET held_until = j.leased_until FROM {{jobs}} j
  WHERE s.held_until = 'infinity' AND j.id = s.job_id;

-- Jobs that run under a cap without a slot of it (the cap was set while they ran) get one.
INSERT INTO {{concurrency_slots}} (key, slot, job_id, held_until)
SELECT l.key, (SELECT COALESCE(max(s.slot), 0) FROM {{concurrency_slots}} s WHERE s.key = l.key)
    + row_number() OVER (PARTITION BY l.key ORDER BY j.id), j.id, j.leased_until
FROM {{concurrency_limits}} l
JOIN {{jobs}} j ON j.state = 'running' AND j.leased_until > now() AND l.key IN ('queue:' || j.queue, 'key:' || j.concurrency_key)
WHERE NOT EXISTS (SELECT 1 FROM {{concurrency_slots}} s WHERE s.key = l.key AND s.job_id = j.id AND s.held_until > now());

UPDATE {{concurrency_limits}} l SET surplus = greatest(0, (SELECT count(*) FROM {{concurrency_slots}} s WHERE s.key = l.key) - l.max);
