import type { JobState } from '../../../core/index.js';
import type { JobStats } from '../../job-store.js';
import type { PgExecutor } from '../pg-executor.js';
import type { PostgresNaming } from '../postgres-naming.js';

/** Job counts per queue and state, and the oldest due job, in two statements sent at once. */
export function jobStatsQuery(t: PostgresNaming) {
  const counts = `SELECT queue, state, count(*)::int AS count FROM ${t.jobs} GROUP BY queue, state ORDER BY queue, state`;
  const due = `SELECT (SELECT min(run_at) FROM ${t.jobs} WHERE state = 'scheduled' AND run_at <= now()) AS oldest, now() AS now`;
  return async (db: PgExecutor): Promise<JobStats> => {
    const [rows, [oldest]] = await Promise.all([
      db.query<{ queue: string; state: JobState; count: number }>(counts),
      db.query<{ oldest: Date | null; now: Date }>(due),
    ]);
    return { counts: rows, oldestDueAt: oldest!.oldest, now: oldest!.now };
  };
}
