import type { HistoryEntry } from '../../job-store.js';
import type { DriverHistoryParams } from '../../operator-reads.js';
import type { PgExecutor } from '../pg-executor.js';
import type { PostgresNaming } from '../postgres-naming.js';
import { HISTORY_COLUMNS, historyEntry, type PgHistoryRow } from './history-entry.js';

/**
 * One job's history, oldest first: all of it, or a page of its newest entries before an entry id,
 * read backwards through the (job_id, id) index and stopping at the page size.
 */
export function jobHistoryQuery(t: PostgresNaming) {
  const all = `SELECT ${HISTORY_COLUMNS} FROM ${t.history} WHERE job_id = $1 ORDER BY id`;
  const page = `SELECT ${HISTORY_COLUMNS} FROM ${t.history} WHERE job_id = $1 AND id < $2 ORDER BY id DESC LIMIT $3`;
  return async (db: PgExecutor, { jobId, limit, before }: DriverHistoryParams): Promise<HistoryEntry[]> => {
    if (limit === null) return (await db.query<PgHistoryRow>(all, [jobId])).map(historyEntry);
    const newestFirst = await db.query<PgHistoryRow>(page, [jobId, before === null ? '9223372036854775807' : String(before), limit]);
    return newestFirst.reverse().map(historyEntry);
  };
}
