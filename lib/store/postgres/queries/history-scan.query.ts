import type { HistoryEntry } from '../../job-store.js';
import type { DriverHistoryScanParams } from '../../operator-reads.js';
import type { PgExecutor } from '../pg-executor.js';
import type { PostgresNaming } from '../postgres-naming.js';
import { HISTORY_COLUMNS, historyEntry, type PgHistoryRow } from './history-entry.js';

/**
 * The whole history in (job_id, id) order, a page after an entry: one range read of the history's
 * (job_id, id) index from the row value on, stopping at the page size.
 */
export function historyScanQuery(t: PostgresNaming) {
  const first = `SELECT ${HISTORY_COLUMNS} FROM ${t.history} ORDER BY job_id, id LIMIT $1`;
  const next = `SELECT ${HISTORY_COLUMNS} FROM ${t.history} WHERE (job_id, id) > ($2::uuid, $3::bigint) ORDER BY job_id, id LIMIT $1`;
  return async (db: PgExecutor, { limit, afterJobId, afterId }: DriverHistoryScanParams): Promise<HistoryEntry[]> =>
    (await (afterJobId === null ? db.query<PgHistoryRow>(first, [limit]) : db.query<PgHistoryRow>(next, [limit, afterJobId, String(afterId)]))).map(historyEntry);
}
