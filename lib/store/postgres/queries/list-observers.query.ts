import type { DriverObserverStatus } from '../../operator-reads.js';
import type { PgExecutor } from '../pg-executor.js';
import type { PostgresNaming } from '../postgres-naming.js';
import { deliverableAfter } from './delivery-order.sql.js';

interface PgObserverRow {
  observer: string;
  last_tx: string;
  last_id: string;
  leased_by: string | null;
  leased_until: Date | null;
  failures: number;
  retry_at: Date | null;
  last_error: string | null;
  updated_at: Date;
  behind: number;
  oldest: Date | null;
}

/**
 * The first $1 cursors by observer (the cursors' key), each with the entries after it that
 * history-read.query.ts would hand out now: the same predicate (delivery-order.sql.ts), read in
 * (tx, id) order from the history key and stopped after $2 for the count, after one for the
 * oldest entry's time. The count needs only the key's columns, so it can be an index-only scan. Run after ORDERED_READ_SETTINGS in the
 * caller's transaction: with the range's size unknown to the planner, it could otherwise read the
 * whole range through a bitmap and sort it. A lease is reported only while it is live.
 */
export function listObserversQuery(t: PostgresNaming) {
  const after = deliverableAfter('h', 'c.last_tx', 'c.last_id');
  const text = `
    SELECT c.observer, c.last_tx::text AS last_tx, c.last_id,
      CASE WHEN c.leased_until > now() THEN c.leased_by END AS leased_by,
      CASE WHEN c.leased_until > now() THEN c.leased_until END AS leased_until,
      c.failures, c.retry_at, c.last_error, c.updated_at, behind.n AS behind, head.at AS oldest
    FROM (SELECT * FROM ${t.cursors} ORDER BY observer LIMIT $1) c
    CROSS JOIN LATERAL (
      SELECT count(*)::integer AS n FROM (SELECT 1 FROM ${t.history} h WHERE ${after} ORDER BY h.tx, h.id LIMIT $2) unread
    ) behind
    LEFT JOIN LATERAL (SELECT h.at FROM ${t.history} h WHERE ${after} ORDER BY h.tx, h.id LIMIT 1) head ON true
    ORDER BY c.observer`;
  return async (db: PgExecutor, limit: number, lagScan: number): Promise<DriverObserverStatus[]> =>
    (await db.query<PgObserverRow>(text, [limit, lagScan])).map((row) => ({
      observer: row.observer,
      position: `${row.last_tx}:${row.last_id}`,
      leasedBy: row.leased_by,
      leasedUntil: row.leased_until,
      failures: row.failures,
      retryAt: row.retry_at,
      lastError: row.last_error,
      updatedAt: row.updated_at,
      lag: row.behind,
      oldestUndeliveredAt: row.oldest,
    }));
}
