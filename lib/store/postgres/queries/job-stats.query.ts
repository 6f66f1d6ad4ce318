import type { JobState } from '../../../core/index.js';
import type { JobStats } from '../../job-store.js';
import type { PgExecutor } from '../pg-executor.js';
import type { PostgresNaming } from '../postgres-naming.js';
import { oldestParked } from './claim-lanes.sql.js';
import { scheduledPriorities } from './claim-steps.sql.js';
import { jobCountsSql } from './job-counts.sql.js';

/**
 * Job counts per queue and state (from the kept counts, see job-counts.sql.ts) and the oldest due
 * job, in one statement. The oldest due job is the earliest of the first entries at or before now
 * of each priority's range of the claim index, and the first of the parked jobs (the ones a limit
 * held back, claim-lanes.sql.ts) by run time: one probe per priority in use and one more, however
 * many jobs wait or are retained.
 */
export function jobStatsQuery(t: PostgresNaming) {
  const text = `
    SELECT d.oldest, d.now, c.queue, c.state, c.count
    FROM (
      SELECT LEAST((
        SELECT min(f.run_at) FROM ${scheduledPriorities(t)} p CROSS JOIN LATERAL (
          SELECT j.run_at FROM ${t.jobs} j WHERE j.state = 'scheduled' AND j.parked_key IS NULL AND j.priority = p.v AND j.run_at <= now() ORDER BY j.run_at, j.seq LIMIT 1
        ) f
      ), (${oldestParked(t)})) AS oldest, now() AS now
    ) d
    LEFT JOIN ${jobCountsSql(t)} c ON true
    ORDER BY c.queue, c.state`;
  return async (db: PgExecutor): Promise<JobStats> => {
    const rows = await db.query<{ oldest: Date | null; now: Date; queue: string | null; state: JobState | null; count: string | null }>(text);
    const counts = rows.filter((row) => row.queue !== null).map((row) => ({ queue: row.queue!, state: row.state!, count: Number(row.count) }));
    return { counts, oldestDueAt: rows[0]!.oldest, now: rows[0]!.now };
  };
}
