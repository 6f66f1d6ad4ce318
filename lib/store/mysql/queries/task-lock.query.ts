import type { MysqlExecutor, MysqlStatement } from '../mysql-executor.js';
import type { MysqlNaming } from '../mysql-naming.js';

/**
 * Locks a task's row of the maintenance table until the transaction ends, creating it when it is
 * missing (the migration seeds none). INSERT ... ON DUPLICATE KEY UPDATE takes the existing row's
 * exclusive lock at once: a SELECT ... FOR UPDATE after an INSERT IGNORE would hold a shared lock
 * first, and two transactions upgrading shared locks on one row deadlock. Assigning the key to
 * itself changes nothing, so an existing row is locked without being written. Waits while another
 * transaction holds the row.
 */
export function lockTaskStatement(t: MysqlNaming, task: string): MysqlStatement {
  return {
    sql: `INSERT INTO ${t.maintenance} (task, last_id, updated_at) VALUES (?, 0, UTC_TIMESTAMP(3)) ON DUPLICATE KEY UPDATE task = task`,
    values: [task],
  };
}

/**
 * Locks a task's row unless another transaction holds it, and returns its place in the log
 * (`last_id`, as text); null when the row is taken, so a pass that finds another one running
 * does nothing and never waits. A missing row is created as {@link lockTaskStatement} does: only
 * a transaction creating it at the same moment can make that wait, once per installation.
 */
export async function tryLockTask(db: MysqlExecutor, t: MysqlNaming, task: string): Promise<string | null> {
  const place = `SELECT last_id FROM ${t.maintenance} WHERE task = ?`;
  const [held] = await db.query<{ last_id: number | string }>(`${place} FOR UPDATE SKIP LOCKED`, [task]);
  if (held) return String(held.last_id);
  // Skipped or missing: a plain read sees a committed row even while another transaction locks it.
  const [seen] = await db.query<{ n: number }>(`SELECT COUNT(*) AS n FROM ${t.maintenance} WHERE task = ?`, [task]);
  if (Number(seen!.n) > 0) return null;
  const { sql, values } = lockTaskStatement(t, task);
  await db.run(sql, values);
  const [created] = await db.query<{ last_id: number | string }>(place, [task]);
  return String(created!.last_id);
}
