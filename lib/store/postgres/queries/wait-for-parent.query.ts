import type { JobState } from '../../../core/index.js';
import type { PgExecutor } from '../pg-executor.js';
import type { PostgresNaming } from '../postgres-naming.js';

/**
 * Waits for whoever is finishing the parent right now (the only writer that holds a lock the
 * guard's `FOR KEY SHARE` conflicts with), then reads its state; the lock goes with the statement.
 */
export function waitForParentQuery(t: PostgresNaming) {
  const text = `SELECT state FROM ${t.jobs} WHERE id = $1 FOR KEY SHARE`;
  return async (db: PgExecutor, id: string): Promise<JobState | undefined> => (await db.query<{ state: JobState }>(text, [id]))[0]?.state;
}
