import type { PgExecutor } from '../pg-executor.js';
import type { PostgresNaming } from '../postgres-naming.js';

/** Deletes a schedule; false when there was none. */
export function deleteScheduleQuery(t: PostgresNaming) {
  const text = `DELETE FROM ${t.schedules} WHERE id = $1 RETURNING id`;
  return async (db: PgExecutor, id: string): Promise<boolean> => (await db.query(text, [id])).length === 1;
}
