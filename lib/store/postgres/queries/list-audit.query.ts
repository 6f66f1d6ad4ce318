import type { AuditRecord } from '../../job-store.js';
import type { PgExecutor } from '../pg-executor.js';
import type { PostgresNaming } from '../postgres-naming.js';

/** The newest audit entries first. */
export function listAuditQuery(t: PostgresNaming) {
  const text = `SELECT at, actor, action, target, detail FROM ${t.audit} ORDER BY id DESC LIMIT $1`;
  return async (db: PgExecutor, limit: number): Promise<AuditRecord[]> => {
    const rows = await db.query<{ at: Date; actor: string; action: string; target: string; detail: unknown }>(text, [limit]);
    return rows.map((row) => ({ ...row, detail: row.detail ?? null }));
  };
}
