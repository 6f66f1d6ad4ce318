import type { Database } from 'better-sqlite3';
import type { AuditEntry } from '../../schedules/index.js';
import type { SqliteNaming } from '../sqlite-naming.js';

/** Writes one audit entry inside the operator action's transaction, so it commits with the action. */
export function insertAuditQuery(db: Database, t: SqliteNaming) {
  const audit = db.prepare(`INSERT INTO ${t.audit} (at, actor, action, target, detail) VALUES (?, ?, ?, ?, ?)`);
  return (entry: AuditEntry, now: number): void => {
    audit.run(now, entry.actor, entry.action, entry.target, entry.detail === undefined ? null : JSON.stringify(entry.detail));
  };
}
