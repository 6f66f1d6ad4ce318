import type { Database } from 'better-sqlite3';
import type { JobRow } from '../../job-row.js';
import type { SqliteNaming } from '../sqlite-naming.js';
import { fromSqliteRow, type SqliteJobRow } from '../sqlite-row.js';

/** One job by id. */
export function getJobQuery(db: Database, t: SqliteNaming) {
  const get = db.prepare(`SELECT * FROM ${t.jobs} WHERE id = ?`);
  return (jobId: string): JobRow | null => {
    const row = get.get(jobId) as SqliteJobRow | undefined;
    return row ? fromSqliteRow(row) : null;
  };
}
