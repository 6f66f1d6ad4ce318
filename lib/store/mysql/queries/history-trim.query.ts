import type { HistoryTrimResult } from '../../job-store.types.js';
import type { MysqlNaming } from '../mysql-naming.js';
import type { MysqlTransaction } from '../mysql-transaction.js';
import { inChunks } from './in-chunks.js';
import { deleteRows } from './row-deletes.js';
import { tryLockTask } from './task-lock.query.js';

/** The maintenance row that holds the trim's place in the log (a position) and keeps passes one at a time. */
export const TRIM_TASK = 'history_trim';

/** Jobs whose entries one ranking statement reads. */
const JOBS_PER_STATEMENT = 500;

/**
 * One pass of the history trim, bounded by what was numbered since the last one. It reads the
 * entries after its place (the maintenance row's `last_id`), up to `limit`, in position order, and
 * never past the slowest observer's cursor; each job among them is cut down to its newest `keep`
 * entries (by id, the job's own order), again sparing what an observer has not passed; and the
 * place moves to the last entry read. A job can only pass the bound by gaining an entry, so looking
 * at the jobs that gained one is enough.
 *
 * Run it after the sequencer (mysql-history-sequencer.ts): only numbered entries are read, and a
 * numbered entry has committed, so every entry read counts as examined and the place can never
 * move past one that commits later. With no observer at all, nothing holds entries back, and those
 * not numbered yet are trimmed too, as PostgreSQL trims entries it cannot deliver yet.
 *
 * The place's row is taken with SKIP LOCKED: a pass that finds another node's pass running does
 * nothing. MySQL cannot cut each job with PostgreSQL's LATERAL ... OFFSET, so the entries to delete
 * are ranked per job with ROW_NUMBER() in a plain read, and deleted one by one by id
 * (row-deletes.ts says why).
 */
export function historyTrimQuery(t: MysqlNaming) {
  const upto = `SELECT MIN(last_id) AS upto FROM ${t.cursors}`;
  const batchUpTo = `SELECT pos, job_id FROM ${t.history} WHERE pos > CAST(? AS SIGNED) AND pos <= CAST(? AS SIGNED) ORDER BY pos LIMIT ?`;
  const batchAll = `SELECT pos, job_id FROM ${t.history} WHERE pos > CAST(? AS SIGNED) ORDER BY pos LIMIT ?`;
  const ranked = `SELECT r.id FROM (
      SELECT x.id, x.pos, ROW_NUMBER() OVER (PARTITION BY x.job_id ORDER BY x.id DESC) AS rn FROM ${t.history} x WHERE x.job_id IN (?)
    ) r WHERE r.rn > ?`;
  // An entry an observer has not passed stays; one with no position yet is past every cursor (NULL fails the test).
  const rankedUpTo = `${ranked} AND r.pos <= CAST(? AS SIGNED)`;
  const move = `UPDATE ${t.maintenance} SET last_id = CAST(? AS SIGNED), updated_at = UTC_TIMESTAMP(3) WHERE task = ?`;
  return async (tx: MysqlTransaction, keep: number, limit: number): Promise<HistoryTrimResult> => {
    const place = await tryLockTask(tx, t, TRIM_TASK);
    if (place === null) return { trimmed: 0, examined: 0 };
    const [{ upto: horizon } = { upto: null }] = await tx.query<{ upto: number | string | null }>(upto);
    const batch =
      horizon === null
        ? await tx.query<{ pos: number | string; job_id: string }>(batchAll, [place, limit])
        : await tx.query<{ pos: number | string; job_id: string }>(batchUpTo, [place, String(horizon), limit]);
    if (batch.length === 0) return { trimmed: 0, examined: 0 };
    let trimmed = 0;
    for (const jobs of inChunks([...new Set(batch.map((entry) => entry.job_id))], JOBS_PER_STATEMENT)) {
      const beyond = horizon === null ? await tx.query<{ id: number }>(ranked, [jobs, keep]) : await tx.query<{ id: number }>(rankedUpTo, [jobs, keep, String(horizon)]);
      trimmed += await deleteRows(tx, t.history, 'id = ?', beyond.map((entry) => [entry.id]));
    }
    await tx.commitWith([{ sql: move, values: [String(batch.at(-1)!.pos), TRIM_TASK] }]);
    return { trimmed, examined: batch.length };
  };
}
