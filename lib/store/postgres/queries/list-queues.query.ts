import type { JobState } from '../../../core/index.js';
import { queueSummaries, type QueueSummary } from '../../queue-summary.js';
import type { PgExecutor } from '../pg-executor.js';
import type { PostgresNaming } from '../postgres-naming.js';
import { jobCountsSql } from './job-counts.sql.js';

/**
 * Every queue with a stored job or a pause row, with its pause state and job counts per state,
 * from the kept counts (job-counts.sql.ts): it never reads the jobs table.
 */
export function listQueuesQuery(t: PostgresNaming) {
  const text = `
    SELECT coalesce(c.queue, q.name) AS name, q.paused, c.state, c.count
    FROM ${jobCountsSql(t)} c FULL JOIN ${t.queues} q ON q.name = c.queue`;
  return async (db: PgExecutor): Promise<QueueSummary[]> =>
    queueSummaries(await db.query<{ name: string; paused: boolean | null; state: JobState | null; count: string | null }>(text));
}
