import type { MysqlNaming } from '../mysql-naming.js';
import type { MysqlTransaction } from '../mysql-transaction.js';

/**
 * Moves a leased cursor to `position` (never backwards) and clears its failures; false when the
 * worker no longer holds a live lease on it. The lease is judged under the row's lock and the move
 * follows: a commit that repeats the last one changes no column, and whether MySQL then reports the
 * row depends on a client flag (CLIENT_FOUND_ROWS).
 */
export function observerCommitQuery(t: MysqlNaming) {
  const held = `SELECT (leased_by = ? AND leased_until > UTC_TIMESTAMP(3)) AS held FROM ${t.cursors} WHERE observer = ? FOR UPDATE`;
  const move = `UPDATE ${t.cursors} SET last_id = GREATEST(last_id, CAST(? AS SIGNED)), failures = 0, retry_at = NULL, last_error = NULL,
      updated_at = UTC_TIMESTAMP(3)
    WHERE observer = ?`;
  return async (tx: MysqlTransaction, observer: string, workerId: string, position: string): Promise<boolean> => {
    const [row] = await tx.query<{ held: number | null }>(held, [workerId, observer]);
    if (Number(row?.held) !== 1) return false;
    await tx.commitWith([{ sql: move, values: [position, observer] }]);
    return true;
  };
}
