-- Snoozes (see the PostgreSQL migration of the same number).
ALTER TABLE {{jobs}} ADD COLUMN snoozes INTEGER NOT NULL DEFAULT 0;
