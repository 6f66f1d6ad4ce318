import type { Database } from 'better-sqlite3';
import { queueSummaries, type QueueCountRow, type QueueSummary } from '../../queue-summary.js';
import type { SqliteNaming } from '../sqlite-naming.js';

/**
 * Every queue with a stored job or a pause row, with its pause state and job counts per state,
 * from the counts the triggers keep (migration 0012): it never reads the jobs table.
 */
export function listQueuesQuery(db: Database, t: SqliteNaming) {
  const list = db.prepare(`
    WITH counted AS (SELECT queue, state, count FROM ${t.counts} WHERE count <> 0)
    SELECT coalesce(c.queue, q.name) AS name, q.paused, c.state, c.count
    FROM counted c FULL JOIN ${t.queues} q ON q.name = c.queue`);
  return (): QueueSummary[] => queueSummaries(list.all() as QueueCountRow[]);
}
