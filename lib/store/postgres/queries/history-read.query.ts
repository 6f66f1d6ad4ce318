import type { HistoryEntry } from '../../job-store.js';
import type { PgExecutor } from '../pg-executor.js';
import type { PostgresNaming } from '../postgres-naming.js';
import { HISTORY_COLUMNS, historyEntry, type PgHistoryRow } from './history-entry.js';

/**
 * The history after a position, in delivery order: by writing transaction, then id. Entries of a
 * transaction that may still be open (at or past the oldest one running) are held back, so a
 * reader never passes an entry that commits later with a smaller position.
 */
export function historyReadQuery(t: PostgresNaming) {
  const text = `SELECT ${HISTORY_COLUMNS} FROM ${t.history}
           WHERE (tx, id) > ($1::xid8, $2::bigint) AND tx < pg_snapshot_xmin(pg_current_snapshot())
           ORDER BY tx, id LIMIT $3`;
  return async (db: PgExecutor, after: string, limit: number): Promise<HistoryEntry[]> => {
    const [tx, id] = after.split(':');
    return (await db.query<PgHistoryRow>(text, [tx, id, limit])).map(historyEntry);
  };
}
