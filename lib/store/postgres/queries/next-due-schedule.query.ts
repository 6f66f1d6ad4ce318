import type { PgExecutor } from '../pg-executor.js';
import type { PostgresNaming } from '../postgres-naming.js';

/** When the next active schedule is due, in epoch ms; null when none is active. */
export function nextDueScheduleQuery(t: PostgresNaming) {
  const text = `SELECT min(next_fire_at) AS next FROM ${t.schedules} WHERE state = 'active'`;
  return async (db: PgExecutor): Promise<number | null> => {
    const [{ next }] = await db.query<{ next: Date | null }>(text);
    return next === null ? null : next.getTime();
  };
}
