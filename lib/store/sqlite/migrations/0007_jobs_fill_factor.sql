-- PostgreSQL's migration 7 leaves room on each page of the jobs table for a job's updates. SQLite's
-- pages have no fill factor, so this version changes nothing here; it exists so that both stores
-- number their schema versions alike.
SELECT 1;
