import type { MysqlExecutor } from '../mysql-executor.js';
import type { MysqlNaming } from '../mysql-naming.js';

/**
 * Records a failed delivery: frees the lease and holds the cursor back for `retryDelayMs`. One
 * fenced statement; it always changes the failure count, so the row it reports is the row it
 * matched whatever the client's flags.
 */
export function observerFailQuery(t: MysqlNaming) {
  const text = `UPDATE ${t.cursors} SET failures = failures + 1, retry_at = UTC_TIMESTAMP(3) + INTERVAL ? * 1000 MICROSECOND, last_error = ?,
      leased_by = NULL, leased_until = NULL, updated_at = UTC_TIMESTAMP(3)
    WHERE observer = ? AND leased_by = ? AND leased_until > UTC_TIMESTAMP(3)`;
  return async (db: MysqlExecutor, observer: string, workerId: string, error: string, retryDelayMs: number): Promise<boolean> =>
    (await db.run(text, [retryDelayMs, error, observer, workerId])).affectedRows === 1;
}
