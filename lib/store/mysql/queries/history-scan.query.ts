import type { HistoryEntry } from '../../job-store.types.js';
import type { DriverHistoryScanParams } from '../../operator-reads.js';
import type { MysqlExecutor } from '../mysql-executor.js';
import type { MysqlNaming } from '../mysql-naming.js';
import { HISTORY_LOG_COLUMNS } from './history-log-row.js';
import { jobHistoryEntries, type MysqlJobHistoryRow } from './job-history.query.js';

/**
 * The whole history in (job_id, id) order, a page after an entry, along job_history_job_idx: the
 * rest of the last job's entries and the jobs after it, each branch a range read that stops at the
 * page size (a row-value comparison would not be read as a range by every MariaDB).
 */
export async function historyScan(db: MysqlExecutor, t: MysqlNaming, { limit, afterJobId, afterId }: DriverHistoryScanParams): Promise<HistoryEntry[]> {
  const rows =
    afterJobId === null
      ? await db.query<MysqlJobHistoryRow>(`SELECT ${HISTORY_LOG_COLUMNS} FROM ${t.history} h ORDER BY h.job_id, h.id LIMIT ?`, [limit])
      : await db.query<MysqlJobHistoryRow>(
          `SELECT * FROM (
             (SELECT ${HISTORY_LOG_COLUMNS} FROM ${t.history} h WHERE h.job_id = ? AND h.id > ? ORDER BY h.id LIMIT ?)
             UNION ALL
             (SELECT ${HISTORY_LOG_COLUMNS} FROM ${t.history} h WHERE h.job_id > ? ORDER BY h.job_id, h.id LIMIT ?)
           ) page ORDER BY page.job_id, page.id LIMIT ?`,
          [afterJobId, afterId, limit, afterJobId, limit, limit],
        );
  return jobHistoryEntries(rows);
}
