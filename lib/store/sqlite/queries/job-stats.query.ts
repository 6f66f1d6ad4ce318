import type { Database } from 'better-sqlite3';
import type { JobStats } from '../../job-store.js';
import type { SqliteNaming } from '../sqlite-naming.js';

/**
 * Job counts per queue and state, and the oldest job due at `now`. Prepared on each call, apart from
 * the store's other statements, so that it reads any schema version's jobs table.
 */
export function jobStatsQuery(db: Database, t: SqliteNaming) {
  const { jobs } = t;
  return (now: number): JobStats => {
    const counts = db.prepare(`SELECT queue, state, count(*) AS count FROM ${jobs} GROUP BY queue, state ORDER BY queue, state`).all() as JobStats['counts'];
    const oldest = db.prepare(`SELECT min(run_at) FROM ${jobs} WHERE state = 'scheduled' AND run_at <= ?`).pluck().get(now) as number | null;
    return { counts, oldestDueAt: oldest === null ? null : new Date(oldest), now: new Date(now) };
  };
}
