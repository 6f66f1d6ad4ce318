import type { Database } from 'better-sqlite3';
import type { DriverObserverStatus } from '../../operator-reads.js';
import type { SqliteNaming } from '../sqlite-naming.js';

interface SqliteObserverRow {
  observer: string;
  last_id: number;
  leased_by: string | null;
  leased_until: number | null;
  failures: number;
  retry_at: number | null;
  last_error: string | null;
  updated_at: number;
  behind: number;
  oldest: number | null;
}

/**
 * The first `limit` cursors by observer (the cursors' key), each with the entries after it that
 * history-read.query.ts hands out: by id (one writer, so ids commit in order), read from the
 * history's integer key and stopped after `scan` for the count, after one for the oldest entry's
 * time. A lease is reported only while it is live at `now`.
 */
export function listObserversQuery(db: Database, t: SqliteNaming) {
  const list = db.prepare(`
    SELECT c.observer, c.last_id,
      CASE WHEN c.leased_until > @now THEN c.leased_by END AS leased_by,
      CASE WHEN c.leased_until > @now THEN c.leased_until END AS leased_until,
      c.failures, c.retry_at, c.last_error, c.updated_at,
      (SELECT count(*) FROM (SELECT 1 FROM ${t.history} h WHERE h.id > c.last_id ORDER BY h.id LIMIT @scan)) AS behind,
      (SELECT h.at FROM ${t.history} h WHERE h.id > c.last_id ORDER BY h.id LIMIT 1) AS oldest
    FROM ${t.cursors} c ORDER BY c.observer LIMIT @limit`);
  return (limit: number, scan: number, now: number): DriverObserverStatus[] =>
    (list.all({ limit, scan, now }) as SqliteObserverRow[]).map((row) => ({
      observer: row.observer,
      position: String(row.last_id),
      leasedBy: row.leased_by,
      leasedUntil: row.leased_until === null ? null : new Date(row.leased_until),
      failures: row.failures,
      retryAt: row.retry_at === null ? null : new Date(row.retry_at),
      lastError: row.last_error,
      updatedAt: new Date(row.updated_at),
      lag: row.behind,
      oldestUndeliveredAt: row.oldest === null ? null : new Date(row.oldest),
    }));
}
