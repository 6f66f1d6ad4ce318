import type { Database } from 'better-sqlite3';
import type { AuditRecord } from '../../job-store.js';
import type { SqliteNaming } from '../sqlite-naming.js';

/** The newest audit entries first. */
export function listAuditQuery(db: Database, t: SqliteNaming) {
  const auditList = db.prepare(`SELECT at, actor, action, target, detail FROM ${t.audit} ORDER BY id DESC LIMIT ?`);
  return (limit: number): AuditRecord[] =>
    (auditList.all(limit) as { at: number; actor: string; action: string; target: string; detail: string | null }[]).map((row) => ({
      ...row,
      at: new Date(row.at),
      detail: row.detail === null ? null : (JSON.parse(row.detail) as unknown),
    }));
}
