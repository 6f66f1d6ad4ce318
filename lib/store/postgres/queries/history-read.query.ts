import type { HistoryEntry } from '../../job-store.js';
import type { PgExecutor } from '../pg-executor.js';
import type { PostgresNaming } from '../postgres-naming.js';
import { deliverableAfter } from './delivery-order.sql.js';
import { HISTORY_COLUMNS, historyEntry, type PgHistoryRow } from './history-entry.js';

/**
 * The history after a position, in delivery order: by writing transaction, then id. Entries of a
 * transaction that may still be open (at or past the oldest one running) are held back, so a
 * reader never passes an entry that commits later with a smaller position.
 */
export function historyReadQuery(t: PostgresNaming) {
  const text = `SELECT ${HISTORY_COLUMNS} FROM ${t.history} h
           WHERE ${deliverableAfter('h', '$1::xid8', '$2::bigint')}
           ORDER BY h.tx, h.id LIMIT $3`;
  return async (db: PgExecutor, after: string, limit: number): Promise<HistoryEntry[]> => {
    const [tx, id] = after.split(':');
    return (await db.query<PgHistoryRow>(text, [tx, id, limit])).map(historyEntry);
  };
}
