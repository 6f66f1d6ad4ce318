import type { PgExecutor } from '../pg-executor.js';
import type { PostgresNaming } from '../postgres-naming.js';

/**
 * Deletes up to `limit` registry rows not seen for `olderThanMs`, oldest first through the
 * (last_seen_at, id) index, then each by its key (an array, as the job purge does, so the planner
 * never hashes the whole table against the batch): a pass reads what it deletes. A row a beat is
 * writing right now is skipped (that node is alive after all).
 */
export function pruneNodesQuery(t: PostgresNaming) {
  const text = `DELETE FROM ${t.nodes} WHERE id = ANY(ARRAY(
      SELECT id FROM ${t.nodes} WHERE last_seen_at < now() - $1 * interval '1 millisecond'
      ORDER BY last_seen_at, id LIMIT $2
      FOR UPDATE SKIP LOCKED
    )) RETURNING 1`;
  return async (db: PgExecutor, olderThanMs: number, limit: number): Promise<number> => (await db.query(text, [olderThanMs, limit])).length;
}
