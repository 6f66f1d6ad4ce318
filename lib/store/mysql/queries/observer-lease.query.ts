import type { DriverObserverLeaseParams } from '../../checked/store-driver.js';
import type { ObserverLease } from '../../job-store.types.js';
import { SEQUENCE_TASK } from '../mysql-history-sequencer.js';
import type { MysqlNaming } from '../mysql-naming.js';
import type { MysqlTransaction } from '../mysql-transaction.js';

/**
 * Leases an observer's cursor to a worker, unless another worker holds a live lease or the cursor
 * waits out a retry delay; null then, and undefined (with `create` false) when the observer has no
 * cursor yet. With `create`, a missing cursor is made at the end of the log: after the last
 * position the sequencer handed out, so run the sequencer first and every entry committed before
 * the lease is behind it, while one still being written gets a later position and is fed to it.
 * Each lease taken records the observer's filter (`states`, `jobs`: JSON arrays, null for
 * everything), which a lean outcome write reads.
 *
 * The cursor's row is locked (and created) first, then judged and written: MySQL's upsert has no
 * WHERE, and the rows an UPDATE reports depend on a client flag (CLIENT_FOUND_ROWS).
 */
export function observerLeaseQuery(t: MysqlNaming) {
  const last = `GREATEST(COALESCE((SELECT last_id FROM ${t.maintenance} WHERE task = ?), 0), COALESCE((SELECT MAX(pos) FROM ${t.history}), 0))`;
  const start = `INSERT INTO ${t.cursors} (observer, last_id, updated_at) VALUES (?, ${last}, UTC_TIMESTAMP(3)) ON DUPLICATE KEY UPDATE observer = observer`;
  const read = `SELECT last_id, failures,
      (leased_by IS NULL OR leased_by = ? OR leased_until <= UTC_TIMESTAMP(3)) AND (retry_at IS NULL OR retry_at <= UTC_TIMESTAMP(3)) AS free
    FROM ${t.cursors} WHERE observer = ? FOR UPDATE`;
  const take = `UPDATE ${t.cursors} SET leased_by = ?, leased_until = UTC_TIMESTAMP(3) + INTERVAL ? * 1000 MICROSECOND, updated_at = UTC_TIMESTAMP(3),
      states = ?, jobs = ?
    WHERE observer = ?`;
  return async (tx: MysqlTransaction, params: DriverObserverLeaseParams, create: boolean): Promise<ObserverLease | null | undefined> => {
    const { observer, workerId, leaseMs, to, jobs } = params;
    const statements = [{ sql: read, values: [workerId, observer] }];
    if (create) statements.unshift({ sql: start, values: [observer, SEQUENCE_TASK] });
    const results = await tx.script(statements);
    const [row] = results.at(-1) as { last_id: number | string; failures: number; free: number }[];
    if (!row) return undefined;
    if (Number(row.free) !== 1) return null;
    const list = (names: readonly string[] | null) => (names === null ? null : JSON.stringify(names));
    await tx.commitWith([{ sql: take, values: [workerId, leaseMs, list(to), list(jobs), observer] }]);
    return { observer, position: String(row.last_id), failures: row.failures };
  };
}
