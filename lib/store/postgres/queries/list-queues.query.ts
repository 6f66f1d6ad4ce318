import type { JobState } from '../../../core/index.js';
import type { DriverQueueListParams } from '../../operator-reads.js';
import { queueSummaries, type QueueSummary } from '../../queue-summary.js';
import type { PgExecutor } from '../pg-executor.js';
import type { PostgresNaming } from '../postgres-naming.js';
import { jobCountsSql } from './job-counts.sql.js';

/**
 * The rows of the queues in `names` (a CTE of the statement): each one's pause flag and its kept
 * counts (job-counts.sql.ts), each read per name through its table's key, plus its unfolded changes.
 */
function rowsOfNames(t: PostgresNaming): string {
  return `
    pending AS (
      SELECT queue, state, sum(delta) AS delta FROM ${t.countDeltas} WHERE queue IN (SELECT name FROM names) GROUP BY queue, state
    )
    SELECT n.name, (SELECT q.paused FROM ${t.queues} q WHERE q.name = n.name) AS paused, c.state, c.count
    FROM names n LEFT JOIN LATERAL (
      SELECT state, sum(k)::bigint AS count FROM (
        SELECT state, count AS k FROM ${t.counts} WHERE queue = n.name
        UNION ALL
        SELECT state, delta FROM pending WHERE queue = n.name
      ) kept GROUP BY state HAVING sum(k) <> 0
    ) c ON true`;
}

/**
 * Every queue with a stored job or a pause row, with its pause state and job counts per state,
 * from the kept counts (job-counts.sql.ts): it never reads the jobs table. A page first picks its
 * names in order from the counts' key (queue, state), the queues' key and the unfolded changes
 * (few, between folds), stopping at the page size, then reads the counts of those names alone:
 * it costs its page whatever the number of queues. The named form reads the names it is given.
 * Neither folds first (postgres-driver-reads.ts): the fold's cleanup of emptied counts reads them all.
 */
export function listQueuesQuery(t: PostgresNaming) {
  const all = `
    SELECT coalesce(c.queue, q.name) AS name, q.paused, c.state, c.count
    FROM ${jobCountsSql(t)} c FULL JOIN ${t.queues} q ON q.name = c.queue`;
  const page = `
    WITH names AS (
      SELECT name FROM (
        (SELECT DISTINCT queue AS name FROM ${t.counts} WHERE queue > $1 ORDER BY queue LIMIT $2)
        UNION (SELECT name FROM ${t.queues} WHERE name > $1 ORDER BY name LIMIT $2)
        UNION (SELECT DISTINCT queue FROM ${t.countDeltas} WHERE queue > $1)
      ) picked ORDER BY name LIMIT $2
    ), ${rowsOfNames(t)}
    ORDER BY n.name`;
  const named = `
    SELECT * FROM (
      WITH names AS (SELECT DISTINCT unnest($1::text[]) AS name), ${rowsOfNames(t)}
    ) listed WHERE paused IS NOT NULL OR state IS NOT NULL
    ORDER BY name`;
  type Row = { name: string; paused: boolean | null; state: JobState | null; count: string | null };
  return async (db: PgExecutor, params: DriverQueueListParams): Promise<QueueSummary[]> => {
    if (params.kind === 'all') return queueSummaries(await db.query<Row>(all));
    if (params.kind === 'named') return queueSummaries(await db.query<Row>(named, [params.queues]), { keepOrder: true });
    // The page keeps the statement's order: its next page starts after its last name as the database compares them.
    return queueSummaries(await db.query<Row>(page, [params.after, params.limit]), { keepOrder: true });
  };
}
