import type { PgExecutor } from '../pg-executor.js';
import type { PostgresNaming } from '../postgres-naming.js';

/** Marks a registered node stopped by the database's clock; a second stop finds no row to change. */
export function nodeStopQuery(t: PostgresNaming) {
  const text = `UPDATE ${t.nodes} SET stopped_at = now(), last_seen_at = now(), running = 0 WHERE id = $1 AND stopped_at IS NULL`;
  return async (db: PgExecutor, id: string): Promise<void> => {
    await db.query(text, [id]);
  };
}
