import type { AuditEntry } from '../../schedules/index.js';
import type { MysqlStatement } from '../mysql-executor.js';
import type { MysqlNaming } from '../mysql-naming.js';
import { instantParam } from '../mysql-row.js';

/** One audit entry, to run inside the operator action's transaction, so it commits with the action. */
export function insertAuditStatement(t: MysqlNaming, entry: AuditEntry, now: number): MysqlStatement {
  return {
    sql: `INSERT INTO ${t.audit} (at, actor, action, target, detail) VALUES (?, ?, ?, ?, ?)`,
    values: [instantParam(now), entry.actor, entry.action, entry.target, entry.detail === undefined ? null : JSON.stringify(entry.detail)],
  };
}
