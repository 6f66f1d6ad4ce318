import type { Database } from 'better-sqlite3';
import type { AuditRecord } from '../../job-store.js';
import type { SqliteNaming } from '../sqlite-naming.js';

/** The newest audit entries first, of one action when asked (read backwards through the key). */
export function listAuditQuery(db: Database, t: SqliteNaming) {
  const all = db.prepare(`SELECT at, actor, action, target, detail FROM ${t.audit} ORDER BY id DESC LIMIT ?`);
  const ofAction = db.prepare(`SELECT at, actor, action, target, detail FROM ${t.audit} WHERE action = ? ORDER BY id DESC LIMIT ?`);
  return (limit: number, action: string | null): AuditRecord[] =>
    ((action === null ? all.all(limit) : ofAction.all(action, limit)) as { at: number; actor: string; action: string; target: string; detail: string | null }[]).map((row) => ({
      ...row,
      at: new Date(row.at),
      detail: row.detail === null ? null : (JSON.parse(row.detail) as unknown),
    }));
}
