import type { AuditEntry } from '../../schedules/index.js';
import type { PgExecutor } from '../pg-executor.js';
import type { PostgresNaming } from '../postgres-naming.js';

/** Writes one audit entry inside the operator action's transaction, so it commits with the action. */
export function insertAuditQuery(t: PostgresNaming) {
  const text = `INSERT INTO ${t.audit} (actor, action, target, detail) VALUES ($1, $2, $3, $4::jsonb)`;
  return async (db: PgExecutor, entry: AuditEntry): Promise<void> => {
    await db.query(text, [entry.actor, entry.action, entry.target, entry.detail === undefined ? null : JSON.stringify(entry.detail)]);
  };
}
