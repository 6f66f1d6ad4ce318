import type { ScheduleRow } from '../../schedules/index.js';
import type { PgExecutor } from '../pg-executor.js';
import type { PostgresNaming } from '../postgres-naming.js';
import { fromPgScheduleRow, SCHEDULE_SELECT, type PgScheduleRow } from '../postgres-schedule-row.js';

/**
 * Up to `limit` active schedules whose next tick is due, locked for the mint; SKIP LOCKED, so two
 * nodes minting at once share the due schedules instead of waiting on each other.
 */
export function dueSchedulesQuery(t: PostgresNaming) {
  const text = `SELECT ${SCHEDULE_SELECT} FROM ${t.schedules} WHERE state = 'active' AND next_fire_at <= now() ORDER BY next_fire_at LIMIT $1 FOR UPDATE SKIP LOCKED`;
  return async (db: PgExecutor, limit: number): Promise<ScheduleRow[]> => (await db.query<PgScheduleRow>(text, [limit])).map(fromPgScheduleRow);
}
