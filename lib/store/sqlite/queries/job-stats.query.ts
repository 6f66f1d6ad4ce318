import type { Database } from 'better-sqlite3';
import type { JobStats } from '../../job-store.js';
import type { SqliteNaming } from '../sqlite-naming.js';
import { dueInRunOrderQuery } from './due-in-run-order.query.js';

/**
 * Job counts per queue and state, from the counts the triggers keep (migration 0012), and the
 * oldest job due at `now`, from the first entry at or before it of each priority's range of the
 * claim index (due-in-run-order.query.ts).
 */
export function jobStatsQuery(db: Database, t: SqliteNaming) {
  const counts = db.prepare(`SELECT queue, state, count FROM ${t.counts} WHERE count <> 0 ORDER BY queue, state`);
  const oldest = dueInRunOrderQuery(db, t);
  return (now: number): JobStats => {
    const due = oldest(now, 1)[0]?.run_at;
    return { counts: counts.all() as JobStats['counts'], oldestDueAt: due === undefined ? null : new Date(due), now: new Date(now) };
  };
}
