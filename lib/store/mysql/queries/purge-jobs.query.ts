import type { JobState } from '../../../core/index.js';
import type { MysqlStatement } from '../mysql-executor.js';
import type { MysqlNaming } from '../mysql-naming.js';
import type { MysqlTransaction } from '../mysql-transaction.js';
import { inChunks } from './in-chunks.js';
import { deleteRows } from './row-deletes.js';

/** The states retention deletes. */
const PURGED_STATES: readonly JobState[] = ['succeeded', 'cancelled'];

/** Jobs one read of their history and edges names. */
const JOBS_PER_READ = 1_000;

interface DoomedRow {
  id: string;
  queue: string;
  state: JobState;
  finished_at: string;
}

/**
 * Deletes finished (succeeded or cancelled) jobs older than the cutoff whose dependants have all
 * been settled, with their history, their edges and the sequence rows whose tail they are, and
 * takes them out of the job counts.
 *
 * The candidates are read oldest first from the finished-jobs index (state, finished_at, seq), one
 * statement per state: MySQL cannot merge two ranges of an index in order, so one statement over
 * both states would read and sort every purgeable job, locking each one, to keep the oldest few.
 * Each reads at most `limit`, locked and skipping jobs another transaction holds, and the oldest
 * `limit` of the two lists go; the rest stay locked until the commit and are left alone. Their
 * history (by job), edges (by child, the primary key, and by parent) and sequence rows (by tail)
 * are found through indexes in a plain read, and every row is deleted by its key (row-deletes.ts
 * says why).
 *
 * MySQL has no triggers here (the store installs none), so the counts' change is appended by this
 * write itself: one negative delta per (queue, state), from the locked rows, for a fold to move
 * into the counts (fold-job-counts.query.ts).
 */
export function purgeJobsQuery(t: MysqlNaming) {
  const candidates = `SELECT j.id, j.queue, j.state, j.finished_at FROM ${t.jobs} j
    WHERE j.state = ? AND j.finished_at < UTC_TIMESTAMP(3) - INTERVAL ? * 1000 MICROSECOND
      AND NOT EXISTS (SELECT 1 FROM ${t.dependencies} d WHERE d.parent_id = j.id AND NOT d.settled)
      AND NOT EXISTS (SELECT 1 FROM ${t.dependencies} i WHERE i.child_id = j.id AND i.sequence IS NOT NULL AND NOT i.settled)
      AND (j.window_kind IS NULL OR j.window_kind <> 'throttle' OR j.window_ends_at <= UTC_TIMESTAMP(3))
    ORDER BY j.finished_at, j.seq LIMIT ?
    FOR UPDATE SKIP LOCKED`;
  const owned = (ids: string[]): MysqlStatement[] => [
    { sql: `SELECT id FROM ${t.history} WHERE job_id IN (?)`, values: [ids] },
    {
      sql: `SELECT child_id, parent_id FROM ${t.dependencies} WHERE child_id IN (?) UNION SELECT child_id, parent_id FROM ${t.dependencies} WHERE parent_id IN (?)`,
      values: [ids, ids],
    },
    { sql: `SELECT \`key\`, tail_id FROM ${t.sequences} WHERE tail_id IN (?)`, values: [ids] },
  ];
  return async (tx: MysqlTransaction, olderThanMs: number, limit: number): Promise<number> => {
    const lists = (await tx.script(PURGED_STATES.map((state) => ({ sql: candidates, values: [state, olderThanMs, limit] })))) as DoomedRow[][];
    const doomed = lists
      .flat()
      .sort((a, b) => (a.finished_at < b.finished_at ? -1 : a.finished_at > b.finished_at ? 1 : 0))
      .slice(0, limit);
    if (doomed.length === 0) return 0;
    const ids = doomed.map((job) => job.id);
    for (const some of inChunks(ids, JOBS_PER_READ)) {
      const [entries, edges, tails] = (await tx.script(owned(some))) as [{ id: number }[], { child_id: string; parent_id: string }[], { key: string; tail_id: string }[]];
      await deleteRows(tx, t.history, 'id = ?', entries.map((entry) => [entry.id]));
      await deleteRows(tx, t.dependencies, 'child_id = ? AND parent_id = ?', edges.map((edge) => [edge.child_id, edge.parent_id]));
      // A sequence whose tail goes has nothing to wait for: its next enqueue starts it afresh. The
      // delete waits for an enqueue that holds the row, reads the tail it committed, and passes a moved one by.
      await deleteRows(tx, t.sequences, '`key` = ? AND tail_id = ?', tails.map((tail) => [tail.key, tail.tail_id]));
    }
    const purged = await deleteRows(tx, t.jobs, 'id = ?', ids.map((id) => [id]));
    await tx.commitWith([countDeltas(t, doomed)]);
    return purged;
  };
}

/** One negative delta per (queue, state) of the deleted jobs, in key order. */
function countDeltas(t: MysqlNaming, doomed: readonly DoomedRow[]): MysqlStatement {
  const deltas = new Map<string, [string, JobState, number]>();
  for (const { queue, state } of doomed) {
    const key = `${queue}\u0000${state}`;
    const entry = deltas.get(key) ?? [queue, state, 0];
    entry[2] -= 1;
    deltas.set(key, entry);
  }
  const rows = [...deltas.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, row]) => row);
  return { sql: `INSERT INTO ${t.countDeltas} (queue, state, delta) VALUES ?`, values: [rows] };
}
