import type { AuditRecord } from '../../job-store.js';
import type { PgExecutor } from '../pg-executor.js';
import type { PostgresNaming } from '../postgres-naming.js';

/**
 * The newest audit entries first, of one action when asked: read backwards through the key, so one
 * action's entries cost the entries after them (the log holds operator actions, a few a day).
 */
export function listAuditQuery(t: PostgresNaming) {
  const all = `SELECT at, actor, action, target, detail FROM ${t.audit} ORDER BY id DESC LIMIT $1`;
  const ofAction = `SELECT at, actor, action, target, detail FROM ${t.audit} WHERE action = $2 ORDER BY id DESC LIMIT $1`;
  return async (db: PgExecutor, limit: number, action: string | null): Promise<AuditRecord[]> => {
    type Row = { at: Date; actor: string; action: string; target: string; detail: unknown };
    const rows = await (action === null ? db.query<Row>(all, [limit]) : db.query<Row>(ofAction, [limit, action]));
    return rows.map((row) => ({ ...row, detail: row.detail ?? null }));
  };
}
