import type { MysqlNaming } from '../mysql-naming.js';
import type { MysqlTransaction } from '../mysql-transaction.js';
import { deleteRows } from './row-deletes.js';
import { tryLockTask } from './task-lock.query.js';

/** The maintenance row whose lock lets one fold run at a time. */
export const FOLD_TASK = 'job_counts_fold';

interface DeltaRow {
  id: number;
  queue: string;
  state: string;
  delta: number;
}

/**
 * Moves up to `limit` rows of pending count changes into the counts, in one transaction, so a
 * count read (one statement, one snapshot) sees each change on one side or the other. One fold
 * runs at a time: the fold's maintenance row is taken with SKIP LOCKED, so a fold that finds
 * another running moves nothing and returns at once, nothing ever waits on a fold, and no two folds
 * take count rows in opposite orders.
 *
 * The change rows are locked oldest first with SKIP LOCKED (a write still open holds its own, which
 * wait for a later fold), summed per (queue, state), added to their counts, and deleted one by
 * one by id (row-deletes.ts: a fold deletes most of the table, which a DELETE naming them all
 * would scan, waiting on the changes of writes in flight). Counts that reached zero are dropped,
 * so a queue that is gone leaves no rows behind. Returns how many change rows it moved.
 */
export function foldJobCountsQuery(t: MysqlNaming) {
  const changes = `SELECT id, queue, state, delta FROM ${t.countDeltas} ORDER BY id LIMIT ? FOR UPDATE SKIP LOCKED`;
  const add = `INSERT INTO ${t.counts} (queue, state, count) VALUES ? ON DUPLICATE KEY UPDATE count = count + VALUES(count)`;
  const emptied = `DELETE FROM ${t.counts} WHERE count = 0`;
  return async (tx: MysqlTransaction, limit: number): Promise<number> => {
    if ((await tryLockTask(tx, t, FOLD_TASK)) === null) return 0;
    const rows = await tx.query<DeltaRow>(changes, [limit]);
    if (rows.length === 0) return 0;
    const sums = new Map<string, [string, string, number]>();
    for (const { queue, state, delta } of rows) {
      const key = `${queue}\u0000${state}`;
      const entry = sums.get(key) ?? [queue, state, 0];
      entry[2] += Number(delta);
      sums.set(key, entry);
    }
    const added = [...sums.entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([, row]) => row)
      .filter(([, , delta]) => delta !== 0);
    if (added.length > 0) await tx.run(add, [added]);
    await deleteRows(tx, t.countDeltas, 'id = ?', rows.map((row) => [row.id]));
    await tx.commitWith([{ sql: emptied }]);
    return rows.length;
  };
}
