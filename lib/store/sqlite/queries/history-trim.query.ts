import type { Database } from 'better-sqlite3';
import type { SqliteNaming } from '../sqlite-naming.js';

/** Deletes entries beyond the newest `keep` of each job, but none an observer has not passed yet. */
export function historyTrimQuery(db: Database, t: SqliteNaming) {
  const historyTrim = db.prepare(`
    DELETE FROM ${t.history} WHERE id IN (
      SELECT id FROM (SELECT id, row_number() OVER (PARTITION BY job_id ORDER BY id DESC) AS n FROM ${t.history})
      WHERE n > ? AND id <= coalesce((SELECT min(last_id) FROM ${t.cursors}), 9223372036854775807) LIMIT ?)`);
  return (keep: number, limit: number): number => historyTrim.run(keep, limit).changes;
}
