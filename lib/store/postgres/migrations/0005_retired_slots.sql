-- A concurrency slot above its key's max (left by lowering a limit while the slot was held) is now
-- retired: held_until 'infinity', so it is never free and heartbeats leave it alone. Claims then
-- find a free slot by (key, held_until) alone, through the free-slot index, instead of checking
-- each slot's number against the max as well. Existing slots above their max are retired here, and
-- those nobody holds are deleted.
DELETE FROM {{concurrency_slots}} s USING {{concurrency_limits}} l
  WHERE s.key = l.key AND s.slot > l.max AND s.job_id IS NULL;
UPDATE {{concurrency_slots}} s SET held_until = 'infinity' FROM {{concurrency_limits}} l
  WHERE s.key = l.key AND s.slot > l.max;
