-- Listings and counts that stay bounded however many finished jobs retention keeps.

-- Jobs are listed newest first. An index entry carries its row's rowid, which is seq, so this
-- index orders each state's jobs by seq: a listing of one state reads one range of it backwards.
-- A listing of every state reads the table itself backwards by rowid, which needs no index.
-- It is declared with NOCASE, which only the listing asks for (`state = ? COLLATE NOCASE`; the
-- states are lower-case words, so it matches the same rows): SQLite's planner would otherwise
-- take `state = 'scheduled'` through it in the claim, instead of the claim index's run_at order.
CREATE INDEX {{local:jobs_state_idx}} ON {{jobs}} (state COLLATE NOCASE);

-- Stored jobs per (queue, state), kept by the counting triggers (sqlite-effects.ts), so that stats
-- and the queue listing read a few rows instead of counting the jobs table. SQLite has one writer
-- at a time, so the triggers update these rows directly. They start from the rows stored now,
-- read once here, inside the migration's write transaction, before the triggers are installed.
CREATE TABLE {{job_counts}} (
  queue TEXT    NOT NULL,
  state TEXT    NOT NULL,
  count INTEGER NOT NULL,
  PRIMARY KEY (queue, state)
);

INSERT INTO {{job_counts}} (queue, state, count)
SELECT queue, state, count(*) FROM {{jobs}} GROUP BY queue, state;
