-- Listings that stay bounded however many finished jobs retention keeps.

-- Jobs are listed newest first. An index entry carries its row's rowid, which is seq, so this
-- index orders each state's jobs by seq: a listing of one state reads one range of it backwards.
-- A listing of every state reads the table itself backwards by rowid, which needs no index.
CREATE INDEX {{local:jobs_state_idx}} ON {{jobs}} (state);
