import type { HistoryEntry } from '../../job-store.types.js';
import type { MysqlExecutor } from '../mysql-executor.js';
import type { MysqlNaming } from '../mysql-naming.js';
import { HISTORY_LOG_COLUMNS, historyLogEntry, type MysqlHistoryLogRow } from './history-log-row.js';

/**
 * The numbered history after a position, in position order through the `pos` index. Entries with
 * no position yet are left for a later read: they get positions after every one handed out, so
 * nothing is passed over. The position travels as text and is cast on the server, since one of up
 * to 16 digits need not survive a JavaScript number.
 */
export function historyReadQuery(t: MysqlNaming) {
  const text = `SELECT ${HISTORY_LOG_COLUMNS} FROM ${t.history} h WHERE h.pos > CAST(? AS SIGNED) ORDER BY h.pos LIMIT ?`;
  return async (db: MysqlExecutor, after: string, limit: number): Promise<HistoryEntry[]> =>
    (await db.query<MysqlHistoryLogRow>(text, [after, limit])).map(historyLogEntry);
}
