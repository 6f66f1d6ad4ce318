-- Fair groups (see the PostgreSQL migration of the same number): the group a job takes turns in at
-- claim time, as wide as a concurrency key. A due grouped job waits in its group's lane
-- (`parked_key` 'group:' and the group). A nullable column at the end: a change of metadata only.
ALTER TABLE {{jobs}} ADD COLUMN group_key VARBINARY(1024) NULL;
