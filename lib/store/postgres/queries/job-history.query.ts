import type { HistoryEntry } from '../../job-store.js';
import type { PgExecutor } from '../pg-executor.js';
import type { PostgresNaming } from '../postgres-naming.js';
import { HISTORY_COLUMNS, historyEntry, type PgHistoryRow } from './history-entry.js';

/** One job's history, oldest first. */
export function jobHistoryQuery(t: PostgresNaming) {
  const text = `SELECT ${HISTORY_COLUMNS} FROM ${t.history} WHERE job_id = $1 ORDER BY id`;
  return async (db: PgExecutor, jobId: string): Promise<HistoryEntry[]> => (await db.query<PgHistoryRow>(text, [jobId])).map(historyEntry);
}
