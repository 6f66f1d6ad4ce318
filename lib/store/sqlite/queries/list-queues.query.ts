import type { Database } from 'better-sqlite3';
import { queueSummaries, type QueueCountRow, type QueueSummary } from '../../queue-summary.js';
import type { SqliteNaming } from '../sqlite-naming.js';

/**
 * Every queue with a stored job or a pause row, with its pause state and job counts per state. It
 * counts the whole jobs table, as `jobStats` does: an operator's read, not a worker's.
 */
export function listQueuesQuery(db: Database, t: SqliteNaming) {
  const list = db.prepare(`
    WITH counted AS (SELECT queue, state, count(*) AS count FROM ${t.jobs} GROUP BY queue, state)
    SELECT coalesce(c.queue, q.name) AS name, q.paused, c.state, c.count
    FROM counted c FULL JOIN ${t.queues} q ON q.name = c.queue`);
  return (): QueueSummary[] => queueSummaries(list.all() as QueueCountRow[]);
}
