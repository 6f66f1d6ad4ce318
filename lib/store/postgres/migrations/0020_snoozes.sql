-- Snoozes (docs/snooze.md): how many times a handler asked to run its job again later. Each snooze
-- also raises max_attempts by one; a replay takes both back. A constant default rewrites nothing.
ALTER TABLE {{jobs}} ADD COLUMN snoozes integer NOT NULL DEFAULT 0;
