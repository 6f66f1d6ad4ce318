import type { HistoryEntry } from '../../job-store.types.js';
import type { DriverHistoryParams } from '../../operator-reads.js';
import type { MysqlExecutor } from '../mysql-executor.js';
import type { MysqlNaming } from '../mysql-naming.js';
import { HISTORY_LOG_COLUMNS, historyLogEntry, type MysqlHistoryLogRow } from './history-log-row.js';

/** A history row as read, before or after the sequencer gave it its position. */
export type MysqlJobHistoryRow = Omit<MysqlHistoryLogRow, 'pos'> & { pos: number | null };

/**
 * One job's history, oldest first: all of it, or a page of its newest entries before an entry id,
 * read backwards through job_history_job_idx (job_id, id) and stopping at the page size. Rows come
 * back as read: an entry committed since the sequencer's last pass has no position yet.
 */
export async function jobHistoryRows(db: MysqlExecutor, t: MysqlNaming, { jobId, limit, before }: DriverHistoryParams): Promise<MysqlJobHistoryRow[]> {
  if (limit === null) return db.query<MysqlJobHistoryRow>(`SELECT ${HISTORY_LOG_COLUMNS} FROM ${t.history} h WHERE h.job_id = ? ORDER BY h.id`, [jobId]);
  const newestFirst = await db.query<MysqlJobHistoryRow>(
    `SELECT ${HISTORY_LOG_COLUMNS} FROM ${t.history} h WHERE h.job_id = ? AND h.id < ? ORDER BY h.id DESC LIMIT ?`,
    [jobId, before ?? Number.MAX_SAFE_INTEGER, limit],
  );
  return newestFirst.reverse();
}

/**
 * Rows as entries. Each position is the row's `pos`; one still without (the sequencer found it
 * locked, so it waits for a later pass) reads as the log's start, '0', which no observer commit
 * moves a cursor back to.
 */
export function jobHistoryEntries(rows: readonly MysqlJobHistoryRow[]): HistoryEntry[] {
  return rows.map((row) => historyLogEntry({ ...row, pos: row.pos ?? 0 }));
}
