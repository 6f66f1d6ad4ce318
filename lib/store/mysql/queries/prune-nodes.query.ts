import type { MysqlExecutor } from '../mysql-executor.js';
import type { MysqlNaming } from '../mysql-naming.js';

/**
 * Deletes up to `limit` registry rows not seen for `olderThanMs`, oldest first through the
 * (last_seen_at, id) index, in one statement. A row a beat is writing right now is waited for, and
 * InnoDB checks it again once the beat commits: its index entry has moved past the cutoff, so
 * the node that beat is kept.
 */
export function pruneNodesQuery(t: MysqlNaming) {
  const text = `DELETE FROM ${t.nodes} WHERE last_seen_at < UTC_TIMESTAMP(3) - INTERVAL ? * 1000 MICROSECOND ORDER BY last_seen_at, id LIMIT ?`;
  return async (db: MysqlExecutor, olderThanMs: number, limit: number): Promise<number> => (await db.run(text, [olderThanMs, limit])).affectedRows;
}
