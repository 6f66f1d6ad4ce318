import type { AuditRecord } from '../../job-store.types.js';
import type { MysqlExecutor } from '../mysql-executor.js';
import { fromMysqlInstant } from '../mysql-instant.js';
import type { MysqlNaming } from '../mysql-naming.js';

/** The newest audit entries first, of one action when asked, read backwards through the primary key; the detail is JSON text. */
export async function listAudit(db: MysqlExecutor, t: MysqlNaming, limit: number, action: string | null): Promise<AuditRecord[]> {
  type Row = { at: string; actor: string; action: string; target: string; detail: string | null };
  const rows =
    action === null
      ? await db.query<Row>(`SELECT at, actor, action, target, detail FROM ${t.audit} ORDER BY id DESC LIMIT ?`, [limit])
      : await db.query<Row>(`SELECT at, actor, action, target, detail FROM ${t.audit} WHERE action = ? ORDER BY id DESC LIMIT ?`, [action, limit]);
  return rows.map((row) => ({ ...row, at: fromMysqlInstant(row.at), detail: row.detail === null ? null : (JSON.parse(row.detail) as unknown) }));
}
