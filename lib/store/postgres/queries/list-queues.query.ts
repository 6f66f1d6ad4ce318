import type { JobState } from '../../../core/index.js';
import { queueSummaries, type QueueSummary } from '../../queue-summary.js';
import type { PgExecutor } from '../pg-executor.js';
import type { PostgresNaming } from '../postgres-naming.js';

/**
 * Every queue with a stored job or a pause row, with its pause state and job counts per state. It
 * counts the whole jobs table, as `jobStats` does: an operator's read, not a worker's.
 */
export function listQueuesQuery(t: PostgresNaming) {
  const text = `
    WITH counted AS (SELECT queue, state, count(*)::int AS count FROM ${t.jobs} GROUP BY queue, state)
    SELECT coalesce(c.queue, q.name) AS name, q.paused, c.state, c.count
    FROM counted c FULL JOIN ${t.queues} q ON q.name = c.queue`;
  return async (db: PgExecutor): Promise<QueueSummary[]> =>
    queueSummaries(await db.query<{ name: string; paused: boolean | null; state: JobState | null; count: number | null }>(text));
}
