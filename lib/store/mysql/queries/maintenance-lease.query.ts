import type { MysqlNaming } from '../mysql-naming.js';
import type { MysqlTransaction } from '../mysql-transaction.js';
import { lockTaskStatement } from './task-lock.query.js';

/**
 * Takes a maintenance task's lease for `leaseMs`, or renews it for its holder; false while another
 * worker's lease is live. The task's row is locked first (and created when missing), then judged
 * and written: MySQL's upsert has no WHERE, and the rows an UPDATE reports depend on a client flag
 * (CLIENT_FOUND_ROWS), so the decision is read under the lock and the write follows it.
 */
export function maintenanceLeaseQuery(t: MysqlNaming) {
  const free = `SELECT (leased_by IS NULL OR leased_until <= UTC_TIMESTAMP(3) OR leased_by = ?) AS free FROM ${t.maintenance} WHERE task = ?`;
  const take = `UPDATE ${t.maintenance} SET leased_by = ?, leased_until = UTC_TIMESTAMP(3) + INTERVAL ? * 1000 MICROSECOND, updated_at = UTC_TIMESTAMP(3)
    WHERE task = ?`;
  return async (tx: MysqlTransaction, task: string, workerId: string, leaseMs: number): Promise<boolean> => {
    const [, rows] = (await tx.script([lockTaskStatement(t, task), { sql: free, values: [workerId, task] }])) as [unknown, { free: number }[]];
    if (Number(rows[0]?.free) !== 1) return false;
    await tx.commitWith([{ sql: take, values: [workerId, leaseMs, task] }]);
    return true;
  };
}
