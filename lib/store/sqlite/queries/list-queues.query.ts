import type { Database } from 'better-sqlite3';
import type { DriverQueueListParams } from '../../operator-reads.js';
import { queueSummaries, type QueueCountRow, type QueueSummary } from '../../queue-summary.js';
import type { SqliteNaming } from '../sqlite-naming.js';

/**
 * Every queue with a stored job or a pause row, with its pause state and job counts per state,
 * from the counts the triggers keep (migration 0012): it never reads the jobs table. A page picks
 * its names in order from the counts' key (queue, state) and the queues' key, stopping at the page
 * size, and reads only their counts; the named form reads the names it is given.
 */
export function listQueuesQuery(db: Database, t: SqliteNaming) {
  const all = db.prepare(`
    WITH counted AS (SELECT queue, state, count FROM ${t.counts} WHERE count <> 0)
    SELECT coalesce(c.queue, q.name) AS name, q.paused, c.state, c.count
    FROM counted c FULL JOIN ${t.queues} q ON q.name = c.queue`);
  const rowsOf = (names: string) => `
    WITH names AS (${names})
    SELECT n.name, q.paused, c.state, c.count
    FROM names n LEFT JOIN ${t.queues} q ON q.name = n.name
      LEFT JOIN ${t.counts} c ON c.queue = n.name AND c.count <> 0`;
  const page = db.prepare(`${rowsOf(`
      SELECT name FROM (
        SELECT * FROM (SELECT DISTINCT queue AS name FROM ${t.counts} WHERE queue > @after ORDER BY queue LIMIT @limit)
        UNION SELECT * FROM (SELECT name FROM ${t.queues} WHERE name > @after ORDER BY name LIMIT @limit)
      ) ORDER BY name LIMIT @limit`)}
    ORDER BY n.name`);
  const named = db.prepare(`${rowsOf('SELECT value AS name FROM json_each(@names)')}
    WHERE q.name IS NOT NULL OR c.queue IS NOT NULL
    ORDER BY n.name`);
  return (params: DriverQueueListParams): QueueSummary[] => {
    if (params.kind === 'all') return queueSummaries(all.all() as QueueCountRow[]);
    if (params.kind === 'named') return queueSummaries(named.all({ names: JSON.stringify(params.queues) }) as QueueCountRow[]);
    return queueSummaries(page.all({ after: params.after, limit: params.limit }) as QueueCountRow[]);
  };
}
