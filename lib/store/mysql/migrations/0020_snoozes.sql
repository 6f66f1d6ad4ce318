-- Snoozes (see the PostgreSQL migration of the same number). InnoDB adds the column in place.
ALTER TABLE {{jobs}} ADD COLUMN snoozes INT NOT NULL DEFAULT 0;
