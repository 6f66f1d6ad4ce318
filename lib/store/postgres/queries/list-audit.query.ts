import type { AuditRecord } from '../../job-store.js';
import type { PgExecutor } from '../pg-executor.js';
import type { PostgresNaming } from '../postgres-naming.js';

/**
 * The newest audit entries first, of one action when asked, older than the entry `before` when
 * given: read backwards through the key, so one action's entries cost the entries after them (the
 * log holds operator actions and limit declarations, a few a day).
 */
export function listAuditQuery(t: PostgresNaming) {
  const all = `SELECT id, at, actor, action, target, detail FROM ${t.audit} WHERE id < $2 ORDER BY id DESC LIMIT $1`;
  const ofAction = `SELECT id, at, actor, action, target, detail FROM ${t.audit} WHERE action = $3 AND id < $2 ORDER BY id DESC LIMIT $1`;
  return async (db: PgExecutor, limit: number, action: string | null, before: number | null): Promise<AuditRecord[]> => {
    type Row = { id: string; at: Date; actor: string; action: string; target: string; detail: unknown };
    const below = before ?? Number.MAX_SAFE_INTEGER;
    const rows = await (action === null ? db.query<Row>(all, [limit, below]) : db.query<Row>(ofAction, [limit, below, action]));
    return rows.map((row) => ({ ...row, id: Number(row.id), detail: row.detail ?? null }));
  };
}
