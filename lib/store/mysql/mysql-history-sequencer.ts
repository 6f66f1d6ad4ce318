import type { MysqlConnections } from './mysql-connections.js';
import type { MysqlStatement } from './mysql-executor.js';
import type { MysqlNaming } from './mysql-naming.js';
import { lockTaskStatement } from './queries/task-lock.query.js';

/** The maintenance row whose lock lets one sequencer run at a time, and whose `last_id` is the last position handed out. */
export const SEQUENCE_TASK = 'history_sequence';

/** Entries one sequencer pass numbers at most: as many as one history read may return. */
export const SEQUENCE_BATCH = 10_000;

/**
 * Numbers the history entries that have committed since the last pass: the step that gives the
 * MySQL store a delivery order with no late arrivals, run at the start of every read that follows
 * the log (historyRead, the observers' lag, the trim, a new observer's starting place).
 *
 * `job_history.id` is an AUTO_INCREMENT value, taken at INSERT, and transactions commit in any
 * order: a host transaction that enqueues a job may hold id 1 open for seconds while id 2 commits.
 * A reader that followed ids would hand out 2 and then never go back for 1. So writers leave
 * `pos` NULL, and positions are handed out here, after commit, in one short transaction:
 *
 * 1. It locks the `history_sequence` row of the maintenance table (creating it the first time),
 *    so sequencers run one at a time. A row lock rather than GET_LOCK: it belongs to the
 *    transaction, so it is released exactly when the numbering commits or rolls back, on every
 *    path, and never stays with a pooled session that was handed back. A pass waits for the one
 *    running rather than skipping its turn, so a read that follows a commit always finds that
 *    commit's entries; the wait is short, as a pass never waits on anything else.
 * 2. It reads the last position handed out: the row's `last_id` (or the largest stored position,
 *    should the row ever be lost). The row is what counts, because retention may delete the
 *    newest entries, and numbering on from what is left would reuse positions an observer passed.
 * 3. It selects up to `batch` entries with no position, in id order, `FOR UPDATE SKIP LOCKED`.
 *    An entry whose transaction is still open is locked by its inserter, so it is skipped and
 *    numbered by a later pass, after it commits; one that rolls back never appears.
 * 4. It numbers them last+1, last+2, ... in id order, moves the row's `last_id` to the last one,
 *    and commits. The numbering is a single-table UPDATE over runs of consecutive ids, each run
 *    wholly this pass's: at READ COMMITTED such an UPDATE passes over rows other transactions
 *    hold (a semi-consistent read) whatever plan the optimizer picks, where a join to the list of
 *    ids may scan the table first and wait on an entry still being written.
 *
 * Each pass sees every pass before it (it waited for their commit to take the lock) and numbers
 * only committed entries, after every position already handed out, so positions are given once,
 * without gaps, and a statement that sees position P sees every position below it: a reader at P
 * never finds a new entry behind it. An entry that commits late simply gets a later position.
 *
 * When no entry waits for a position (a plain read, which sees committed rows only, finds none) the
 * pass takes no lock and writes nothing, so readers of an idle log stay read-only. A backlog larger
 * than `batch` is numbered over successive passes. Returns how many entries it numbered.
 */
export async function sequenceHistory(conns: MysqlConnections, naming: MysqlNaming, batch = SEQUENCE_BATCH): Promise<number> {
  const history = naming.history;
  const [waiting] = await conns.session((db) => db.query<{ id: number }>(`SELECT id FROM ${history} WHERE pos IS NULL LIMIT 1`));
  if (!waiting) return 0;
  return conns.transaction(async (tx) => {
    // The lock, the last position and the selection go in one round trip, in this order.
    const [, lastRows, idRows] = (await tx.script([
      lockTaskStatement(naming, SEQUENCE_TASK),
      {
        sql: `SELECT GREATEST(m.last_id, COALESCE((SELECT MAX(pos) FROM ${history}), 0)) AS last FROM ${naming.maintenance} m WHERE m.task = ?`,
        values: [SEQUENCE_TASK],
      },
      { sql: `SELECT id FROM ${history} WHERE pos IS NULL ORDER BY id LIMIT ? FOR UPDATE SKIP LOCKED`, values: [batch] },
    ])) as [unknown, { last: number }[], { id: number }[]];
    const ids = idRows.map((row) => row.id);
    if (ids.length === 0) return 0;
    const from = Number(lastRows[0]!.last);
    await tx.commitWith([
      ...numbering(history, ids, from),
      { sql: `UPDATE ${naming.maintenance} SET last_id = ?, updated_at = UTC_TIMESTAMP(3) WHERE task = ?`, values: [from + ids.length, SEQUENCE_TASK] },
    ]);
    return ids.length;
  });
}

/** Runs of consecutive ids one numbering UPDATE covers. */
const RUNS_PER_UPDATE = 500;

/**
 * UPDATEs that give ascending `ids` the positions after `from`, in order: each run of consecutive
 * ids [first, last] holds only rows this pass locked, so `pos = id + offset` numbers exactly them.
 */
function numbering(history: string, ids: readonly number[], from: number): MysqlStatement[] {
  const runs: { first: number; last: number; offset: number }[] = [];
  ids.forEach((id, index) => {
    const run = runs.at(-1);
    if (run && id === run.last + 1) run.last = id;
    else runs.push({ first: id, last: id, offset: from + index + 1 - id });
  });
  const statements: MysqlStatement[] = [];
  for (let start = 0; start < runs.length; start += RUNS_PER_UPDATE) {
    const some = runs.slice(start, start + RUNS_PER_UPDATE);
    statements.push({
      sql: `UPDATE ${history} SET pos = CASE ${some.map(() => 'WHEN id BETWEEN ? AND ? THEN id + ?').join(' ')} END
        WHERE ${some.map(() => 'id BETWEEN ? AND ?').join(' OR ')}`,
      values: [...some.flatMap((run) => [run.first, run.last, run.offset]), ...some.flatMap((run) => [run.first, run.last])],
    });
  }
  return statements;
}
