-- The lean finish (see the PostgreSQL migration of the same number). `states` and `jobs` are JSON
-- arrays of text, null for everything.
ALTER TABLE {{observer_cursors}} ADD COLUMN states TEXT;
ALTER TABLE {{observer_cursors}} ADD COLUMN jobs TEXT;
ALTER TABLE {{nodes}} ADD COLUMN finish TEXT;
