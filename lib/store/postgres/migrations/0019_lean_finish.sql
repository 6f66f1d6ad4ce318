-- The lean finish (docs/stores.md#lean-finish). An observer's cursor records what it hears about,
-- set by each lease its dispatcher takes: `states` (its `to`) and `jobs` (its wire names), null
-- for everything. A lean outcome write keeps a job whose entries an observer would still be fed;
-- a cursor a node of an earlier release leased has nulls, and so keeps every job. Each node's
-- registry row records the finish mode of the store its beats go through (null from an earlier
-- release), for the dashboard and the CLI to say what is kept. Nullable columns rewrite nothing.
ALTER TABLE {{observer_cursors}} ADD COLUMN states text[], ADD COLUMN jobs text[];
ALTER TABLE {{nodes}} ADD COLUMN finish text;
