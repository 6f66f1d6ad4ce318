import type { Database } from 'better-sqlite3';
import type { SqliteNaming } from '../sqlite-naming.js';

/** Moves a leased cursor to `lastId` (never backwards) and clears its failures; false when the lease is gone. */
export function observerCommitQuery(db: Database, t: SqliteNaming) {
  const commit = db.prepare(`
    UPDATE ${t.cursors} SET last_id = max(last_id, @last_id), failures = 0, retry_at = NULL, last_error = NULL, updated_at = @now
    WHERE observer = @observer AND leased_by = @worker AND leased_until > @now`);
  return (observer: string, worker: string, lastId: number, now: number): boolean => commit.run({ observer, worker, last_id: lastId, now }).changes === 1;
}
