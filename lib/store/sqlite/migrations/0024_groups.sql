-- Fair groups (see the PostgreSQL migration of the same number): the group a job takes turns in at
-- claim time. A due grouped job waits in its group's lane (`parked_key` 'group:' and the group).
ALTER TABLE {{jobs}} ADD COLUMN group_key TEXT;
