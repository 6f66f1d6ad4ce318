-- The history is keyed by (tx, id), the order observers read it in, instead of by id alone. The
-- (tx, id) index existed already for delivery, so the id key was a third index that every history
-- entry paid for (two per job that runs: its claim and its outcome), used only by the trim, which
-- now deletes by (tx, id). A key remains, so the table keeps a replica identity for logical
-- replication. Building the unique index reads the whole history once, under this migration's lock.
ALTER TABLE {{job_history}} DROP CONSTRAINT {{local:job_history_pkey}};
DROP INDEX {{job_history_delivery_idx}};
ALTER TABLE {{job_history}} ADD CONSTRAINT {{local:job_history_pkey}} PRIMARY KEY (tx, id);
