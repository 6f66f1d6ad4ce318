import type { AuditRecord } from '../../job-store.types.js';
import type { MysqlExecutor } from '../mysql-executor.js';
import { fromMysqlInstant } from '../mysql-instant.js';
import type { MysqlNaming } from '../mysql-naming.js';

/** The newest audit entries first, of one action when asked, older than `before` when given, read backwards through the primary key; the detail is JSON text. */
export async function listAudit(db: MysqlExecutor, t: MysqlNaming, limit: number, action: string | null, before: number | null): Promise<AuditRecord[]> {
  type Row = { id: number | string; at: string; actor: string; action: string; target: string; detail: string | null };
  const below = before ?? Number.MAX_SAFE_INTEGER;
  const rows =
    action === null
      ? await db.query<Row>(`SELECT id, at, actor, action, target, detail FROM ${t.audit} WHERE id < ? ORDER BY id DESC LIMIT ?`, [below, limit])
      : await db.query<Row>(`SELECT id, at, actor, action, target, detail FROM ${t.audit} WHERE action = ? AND id < ? ORDER BY id DESC LIMIT ?`, [action, below, limit]);
  return rows.map((row) => ({ ...row, id: Number(row.id), at: fromMysqlInstant(row.at), detail: row.detail === null ? null : (JSON.parse(row.detail) as unknown) }));
}
