import type { Database } from 'better-sqlite3';
import type { HistoryEntry } from '../../job-store.js';
import type { DriverHistoryParams } from '../../operator-reads.js';
import type { SqliteNaming } from '../sqlite-naming.js';
import { historyEntry, type SqliteHistoryRow } from './history-entry.js';

/**
 * One job's history, oldest first: all of it, or a page of its newest entries before an entry id,
 * read backwards through the (job_id, id) index and stopping at the page size.
 */
export function jobHistoryQuery(db: Database, t: SqliteNaming) {
  const history = db.prepare(`SELECT * FROM ${t.history} WHERE job_id = ? ORDER BY id`);
  const page = db.prepare(`SELECT * FROM ${t.history} WHERE job_id = ? AND id < ? ORDER BY id DESC LIMIT ?`);
  return ({ jobId, limit, before }: DriverHistoryParams): HistoryEntry[] => {
    if (limit === null) return (history.all(jobId) as SqliteHistoryRow[]).map(historyEntry);
    return (page.all(jobId, before ?? Number.MAX_SAFE_INTEGER, limit) as SqliteHistoryRow[]).reverse().map(historyEntry);
  };
}
