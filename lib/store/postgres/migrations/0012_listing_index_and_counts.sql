-- Listings that stay bounded however many finished jobs retention keeps.

-- Jobs are listed newest first. This index serves that order per state: a listing of one state
-- reads one range of it backwards, and a listing of every state merges one such range per state.
-- It is the only index added here, and it is not free: `state` is in it, so every claim and outcome
-- write adds an entry (those updates were never HOT: state is in other indexes' predicates).
-- Building it reads the jobs table once, under this migration's lock.
CREATE INDEX {{local:jobs_state_seq_idx}} ON {{jobs}} (state, seq);
