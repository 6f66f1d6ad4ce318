-- The paused queues, which every claim reads once into a list (claim-steps.sql.ts): a partial index
-- holding only them, usually none, so that read does not scan every queue ever paused and resumed.
CREATE INDEX {{local:queues_paused_idx}} ON {{queues}} (name) WHERE paused = 1;
