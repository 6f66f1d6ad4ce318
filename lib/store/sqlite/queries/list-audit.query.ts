import type { Database } from 'better-sqlite3';
import type { AuditRecord } from '../../job-store.js';
import type { SqliteNaming } from '../sqlite-naming.js';

/** The newest audit entries first, of one action when asked, older than `before` when given (read backwards through the key). */
export function listAuditQuery(db: Database, t: SqliteNaming) {
  const columns = 'id, at, actor, action, target, detail';
  const all = db.prepare(`SELECT ${columns} FROM ${t.audit} WHERE id < ? ORDER BY id DESC LIMIT ?`);
  const ofAction = db.prepare(`SELECT ${columns} FROM ${t.audit} WHERE action = ? AND id < ? ORDER BY id DESC LIMIT ?`);
  return (limit: number, action: string | null, before: number | null): AuditRecord[] => {
    const below = before ?? Number.MAX_SAFE_INTEGER;
    const rows = (action === null ? all.all(below, limit) : ofAction.all(action, below, limit)) as { id: number; at: number; actor: string; action: string; target: string; detail: string | null }[];
    return rows.map((row) => ({ ...row, at: new Date(row.at), detail: row.detail === null ? null : (JSON.parse(row.detail) as unknown) }));
  };
}
