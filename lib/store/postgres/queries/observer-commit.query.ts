import type { PgExecutor } from '../pg-executor.js';
import type { PostgresNaming } from '../postgres-naming.js';

/**
 * Moves a leased cursor to `position` (never backwards) and clears its failures; false when the
 * worker no longer holds a live lease on it.
 */
export function observerCommitQuery(t: PostgresNaming) {
  const forward = `($3::xid8, $4::bigint) > (last_tx, last_id)`;
  const text = `UPDATE ${t.cursors} SET
           last_tx = CASE WHEN ${forward} THEN $3::xid8 ELSE last_tx END,
           last_id = CASE WHEN ${forward} THEN $4::bigint ELSE last_id END,
           failures = 0, retry_at = NULL, last_error = NULL, updated_at = now()
         WHERE observer = $1 AND leased_by = $2 AND leased_until > now() RETURNING observer`;
  return async (db: PgExecutor, observer: string, workerId: string, position: string): Promise<boolean> => {
    const [tx, id] = position.split(':');
    return (await db.query(text, [observer, workerId, tx, id])).length === 1;
  };
}
