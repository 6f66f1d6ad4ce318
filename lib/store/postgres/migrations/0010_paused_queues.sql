-- The paused queues, which every claim reads (claim-steps.sql.ts): a partial index holding only them,
-- usually none, so that read costs nothing however many queues were ever paused and resumed, and
-- however many a worker serves.
CREATE INDEX {{local:queues_paused_idx}} ON {{queues}} (name) WHERE paused;
