import type { Database } from 'better-sqlite3';
import type { HistoryEntry } from '../../job-store.js';
import type { SqliteNaming } from '../sqlite-naming.js';
import { historyEntry, type SqliteHistoryRow } from './history-entry.js';

/** One job's history, oldest first. */
export function jobHistoryQuery(db: Database, t: SqliteNaming) {
  const history = db.prepare(`SELECT * FROM ${t.history} WHERE job_id = ? ORDER BY id`);
  return (jobId: string): HistoryEntry[] => (history.all(jobId) as SqliteHistoryRow[]).map(historyEntry);
}
