import type { PgExecutor } from '../pg-executor.js';
import type { PostgresNaming } from '../postgres-naming.js';

/** Records a failed delivery: frees the lease and holds the cursor back for `retryDelayMs`. */
export function observerFailQuery(t: PostgresNaming) {
  const text = `UPDATE ${t.cursors} SET failures = failures + 1, retry_at = now() + $4 * interval '1 millisecond', last_error = $3,
             leased_by = NULL, leased_until = NULL, updated_at = now()
           WHERE observer = $1 AND leased_by = $2 AND leased_until > now() RETURNING observer`;
  return async (db: PgExecutor, observer: string, workerId: string, error: string, retryDelayMs: number): Promise<boolean> =>
    (await db.query(text, [observer, workerId, error, retryDelayMs])).length === 1;
}
