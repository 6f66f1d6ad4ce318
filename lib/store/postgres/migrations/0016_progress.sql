-- The last progress a running attempt reported, written with its heartbeat under the lease fence.
-- Null until a handler reports; adding a nullable column rewrites nothing.
ALTER TABLE {{jobs}} ADD COLUMN progress jsonb;
