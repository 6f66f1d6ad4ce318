import type { Database } from 'better-sqlite3';
import type { HistoryEntry } from '../../job-store.js';
import type { DriverHistoryScanParams } from '../../operator-reads.js';
import type { SqliteNaming } from '../sqlite-naming.js';
import { historyEntry, type SqliteHistoryRow } from './history-entry.js';

/** The whole history in (job_id, id) order, a page after an entry, read along the (job_id, id) index (see the PostgreSQL query). */
export function historyScanQuery(db: Database, t: SqliteNaming) {
  const first = db.prepare(`SELECT * FROM ${t.history} ORDER BY job_id, id LIMIT ?`);
  const next = db.prepare(`SELECT * FROM ${t.history} WHERE (job_id, id) > (?, ?) ORDER BY job_id, id LIMIT ?`);
  return ({ limit, afterJobId, afterId }: DriverHistoryScanParams): HistoryEntry[] =>
    ((afterJobId === null ? first.all(limit) : next.all(afterJobId, afterId, limit)) as SqliteHistoryRow[]).map(historyEntry);
}
