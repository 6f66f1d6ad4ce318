-- What verify needs to judge an outcome against its lease (see the PostgreSQL migration of the
-- same number). Nullable columns at the end of the row: MariaDB adds them in place.
ALTER TABLE {{job_history}}
  ADD COLUMN worker_id VARCHAR(256) NULL,
  ADD COLUMN lease_until DATETIME(3) NULL;
