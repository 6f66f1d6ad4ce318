import type { Database } from 'better-sqlite3';
import type { JobStats } from '../../job-store.js';
import type { SqliteNaming } from '../sqlite-naming.js';

/**
 * Job counts per queue and state, from the counts the triggers keep (migration 0012), and the
 * oldest job due at `now`, from the first entry of the claim index at or before it.
 */
export function jobStatsQuery(db: Database, t: SqliteNaming) {
  const counts = db.prepare(`SELECT queue, state, count FROM ${t.counts} WHERE count <> 0 ORDER BY queue, state`);
  const oldest = db.prepare(`SELECT run_at FROM ${t.jobs} WHERE state = 'scheduled' AND run_at <= ? ORDER BY run_at, seq LIMIT 1`).pluck();
  return (now: number): JobStats => {
    const due = oldest.get(now) as number | undefined;
    return { counts: counts.all() as JobStats['counts'], oldestDueAt: due === undefined ? null : new Date(due), now: new Date(now) };
  };
}
