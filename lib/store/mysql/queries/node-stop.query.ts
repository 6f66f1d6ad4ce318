import type { MysqlExecutor } from '../mysql-executor.js';
import type { MysqlNaming } from '../mysql-naming.js';

/** Marks a registered node stopped by the database's clock; a second stop finds no row to change. */
export function nodeStopQuery(t: MysqlNaming) {
  const text = `UPDATE ${t.nodes} SET stopped_at = UTC_TIMESTAMP(3), last_seen_at = UTC_TIMESTAMP(3), running = 0 WHERE id = ? AND stopped_at IS NULL`;
  return async (db: MysqlExecutor, id: string): Promise<void> => {
    await db.run(text, [id]);
  };
}
