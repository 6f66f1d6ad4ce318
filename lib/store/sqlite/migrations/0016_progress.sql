-- The last progress a running attempt reported (JSON text), written with its heartbeat under the
-- lease fence; null until a handler reports.
ALTER TABLE {{jobs}} ADD COLUMN progress TEXT;
