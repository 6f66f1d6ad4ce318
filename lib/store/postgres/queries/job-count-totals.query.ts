import type { JobState } from '../../../core/index.js';
import type { JobCountTotals } from '../../job-store.js';
import type { PgExecutor } from '../pg-executor.js';
import type { PostgresNaming } from '../postgres-naming.js';
import { jobCountsSql } from './job-counts.sql.js';

/**
 * Stored jobs per state over every queue, and the number of queues the listing shows, summed in the
 * database from the kept counts (job-counts.sql.ts) and the queues' pause rows: it reads a row per
 * queue and state, never the jobs table, and returns a row per state.
 */
export function jobCountTotalsQuery(t: PostgresNaming) {
  const text = `
    WITH kept AS MATERIALIZED ${jobCountsSql(t)}
    SELECT (SELECT count(*) FROM (SELECT queue FROM kept UNION SELECT name FROM ${t.queues}) q)::int AS queues, s.state, s.count
    FROM (SELECT 1) one LEFT JOIN (SELECT state, sum(count)::bigint AS count FROM kept GROUP BY state) s ON true`;
  return async (db: PgExecutor): Promise<JobCountTotals> => {
    const rows = await db.query<{ queues: number; state: JobState | null; count: string | null }>(text);
    const counts: Partial<Record<JobState, number>> = {};
    for (const row of rows) if (row.state !== null) counts[row.state] = Number(row.count);
    return { counts, queues: rows[0]!.queues };
  };
}
