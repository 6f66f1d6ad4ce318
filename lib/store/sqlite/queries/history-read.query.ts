import type { Database } from 'better-sqlite3';
import type { HistoryEntry } from '../../job-store.js';
import type { SqliteNaming } from '../sqlite-naming.js';
import { historyEntry, type SqliteHistoryRow } from './history-entry.js';

/** The history after an id, in id order: one writer at a time, so ids commit in order. */
export function historyReadQuery(db: Database, t: SqliteNaming) {
  const historyRead = db.prepare(`SELECT * FROM ${t.history} WHERE id > ? ORDER BY id LIMIT ?`);
  return (afterId: number, limit: number): HistoryEntry[] => (historyRead.all(afterId, limit) as SqliteHistoryRow[]).map(historyEntry);
}
