-- Listings and counts that stay bounded however many finished jobs retention keeps.
--
-- Writers wait from here until this migration's transaction commits, with the counting triggers
-- installed after it (postgres-effects.ts), so the counts seeded below miss no change and count
-- none twice. The index build and the seed each read the jobs table once, under this lock.
LOCK TABLE {{jobs}} IN SHARE ROW EXCLUSIVE MODE;

-- Jobs are listed newest first. This index serves that order per state: a listing of one state
-- reads one range of it backwards, and a listing of every state merges one such range per state.
-- It is the only index added here, and it is not free: `state` is in it, so every claim and outcome
-- write adds an entry (those updates were never HOT: state is in other indexes' predicates).
CREATE INDEX {{local:jobs_state_seq_idx}} ON {{jobs}} (state, seq);

-- Stored jobs per (queue, state), so that stats and the queue listing read a few rows instead of
-- counting the jobs table. The counting trigger does not update these rows: every claim and
-- outcome write would then queue on the same row lock. It appends what each statement changed to
-- job_count_deltas instead, and a fold moves those rows into job_counts in one statement. A count
-- is its row plus the deltas not folded yet, read in one snapshot.
CREATE TABLE {{job_counts}} (
  queue text   NOT NULL,
  state text   NOT NULL,
  count bigint NOT NULL,
  PRIMARY KEY (queue, state)
);

-- Insert-only between folds, and read whole by the counts and the fold: no index to maintain.
CREATE TABLE {{job_count_deltas}} (
  queue text   NOT NULL,
  state text   NOT NULL,
  delta bigint NOT NULL
);

INSERT INTO {{job_counts}} (queue, state, count)
SELECT queue, state, count(*) FROM {{jobs}} GROUP BY queue, state;
