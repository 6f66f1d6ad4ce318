import type { Database } from 'better-sqlite3';
import type { SqliteNaming } from '../sqlite-naming.js';

/** Records a failed delivery: frees the lease and holds the cursor back for `delay` ms. */
export function observerFailQuery(db: Database, t: SqliteNaming) {
  const fail = db.prepare(`
    UPDATE ${t.cursors} SET failures = failures + 1, retry_at = @now + @delay, last_error = @error, leased_by = NULL, leased_until = NULL, updated_at = @now
    WHERE observer = @observer AND leased_by = @worker AND leased_until > @now`);
  return (observer: string, worker: string, error: string, delay: number, now: number): boolean =>
    fail.run({ observer, worker, error, delay, now }).changes === 1;
}
