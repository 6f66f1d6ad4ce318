import type { DriverObserverStatus } from '../../operator-reads.js';
import type { MysqlExecutor } from '../mysql-executor.js';
import { fromMysqlInstant } from '../mysql-instant.js';
import type { MysqlNaming } from '../mysql-naming.js';

interface MysqlCursorRow {
  observer: string;
  last_id: number | string;
  leased_by: string | null;
  leased_until: string | null;
  failures: number;
  retry_at: string | null;
  last_error: string | null;
  updated_at: string;
}

interface MysqlLagRow {
  place: number | string;
  behind: number;
  oldest: string | null;
}

/** Distinct cursor positions one lag statement measures. */
const POSITIONS_PER_STATEMENT = 100;

/**
 * The first `limit` cursors by observer (the cursors' key), each with the entries after it that
 * history-read.query.ts would hand out now: numbered ones, in position order through the `pos`
 * index, stopped after `scan` for the count and after one for the oldest entry's time. A lease is
 * reported only while it is live by the database's clock.
 *
 * PostgreSQL measures each cursor in the same statement with LATERAL; MariaDB has no LATERAL, nor
 * outer references in a derived table, so the lag is a second statement: one bounded count per
 * distinct position, the positions read first passed in as parameters.
 */
export function listObserversQuery(t: MysqlNaming) {
  const cursors = `SELECT observer, last_id,
      CASE WHEN leased_until > UTC_TIMESTAMP(3) THEN leased_by END AS leased_by,
      CASE WHEN leased_until > UTC_TIMESTAMP(3) THEN leased_until END AS leased_until,
      failures, retry_at, last_error, updated_at
    FROM ${t.cursors} ORDER BY observer LIMIT ?`;
  const lag = `SELECT CAST(? AS SIGNED) AS place,
      (SELECT COUNT(*) FROM (SELECT 1 FROM ${t.history} WHERE pos > CAST(? AS SIGNED) ORDER BY pos LIMIT ?) unread) AS behind,
      (SELECT at FROM ${t.history} WHERE pos > CAST(? AS SIGNED) ORDER BY pos LIMIT 1) AS oldest`;
  return async (db: MysqlExecutor, limit: number, scan: number): Promise<DriverObserverStatus[]> => {
    const rows = await db.query<MysqlCursorRow>(cursors, [limit]);
    const positions = [...new Set(rows.map((row) => String(row.last_id)))];
    const lags = new Map<string, MysqlLagRow>();
    for (let start = 0; start < positions.length; start += POSITIONS_PER_STATEMENT) {
      const some = positions.slice(start, start + POSITIONS_PER_STATEMENT);
      const measured = await db.query<MysqlLagRow>(
        some.map(() => `(${lag})`).join(' UNION ALL '),
        some.flatMap((position) => [position, position, scan, position]),
      );
      for (const row of measured) lags.set(String(row.place), row);
    }
    return rows.map((row) => {
      const measured = lags.get(String(row.last_id));
      return {
        observer: row.observer,
        position: String(row.last_id),
        leasedBy: row.leased_by,
        leasedUntil: fromMysqlInstant(row.leased_until),
        failures: row.failures,
        retryAt: fromMysqlInstant(row.retry_at),
        lastError: row.last_error,
        updatedAt: fromMysqlInstant(row.updated_at),
        lag: Number(measured?.behind ?? 0),
        oldestUndeliveredAt: fromMysqlInstant(measured?.oldest ?? null),
      };
    });
  };
}
