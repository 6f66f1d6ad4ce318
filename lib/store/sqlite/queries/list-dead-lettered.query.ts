import type { Database } from 'better-sqlite3';
import type { JobRow } from '../../job-row.js';
import type { SqliteNaming } from '../sqlite-naming.js';
import { fromSqliteRow, type SqliteJobRow } from '../sqlite-row.js';

/** Dead-lettered jobs, most recently dead-lettered first. */
export function listDeadLetteredQuery(db: Database, t: SqliteNaming) {
  const deadLettered = db.prepare(`SELECT * FROM ${t.jobs} WHERE state = 'dead_lettered' ORDER BY finished_at DESC, seq DESC LIMIT ?`);
  return (limit: number): JobRow[] => (deadLettered.all(limit) as SqliteJobRow[]).map(fromSqliteRow);
}
