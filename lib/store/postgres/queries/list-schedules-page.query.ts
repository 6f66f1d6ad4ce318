import type { ScheduleRow } from '../../schedules/index.js';
import type { PgExecutor } from '../pg-executor.js';
import type { PostgresNaming } from '../postgres-naming.js';
import { fromPgScheduleRow, SCHEDULE_SELECT, type PgScheduleRow } from '../postgres-schedule-row.js';

/**
 * One page of schedules, oldest first, read in order from the (created_at, id) index (migration
 * 0011) and stopped at the page size: the first page, or the schedules after the one `after`
 * names, whose place is read in the statement itself (a creation instant does not survive a round
 * trip through a JavaScript Date, which keeps milliseconds only). Null when `after` names no schedule.
 */
export function listSchedulesPageQuery(t: PostgresNaming) {
  const first = `SELECT ${SCHEDULE_SELECT} FROM ${t.schedules} ORDER BY created_at, id LIMIT $1`;
  const after = `SELECT ${SCHEDULE_SELECT} FROM ${t.schedules}
    WHERE (created_at, id) > ((SELECT created_at FROM ${t.schedules} WHERE id = $2), $2::uuid)
    ORDER BY created_at, id LIMIT $1`;
  const exists = `SELECT 1 FROM ${t.schedules} WHERE id = $1`;
  return async (db: PgExecutor, limit: number, afterId: string | null): Promise<ScheduleRow[] | null> => {
    if (afterId === null) return (await db.query<PgScheduleRow>(first, [limit])).map(fromPgScheduleRow);
    const rows = await db.query<PgScheduleRow>(after, [limit, afterId]);
    // An empty page is the end of the list, or a cursor that names nothing: only then ask which.
    if (rows.length === 0 && (await db.query(exists, [afterId])).length === 0) return null;
    return rows.map(fromPgScheduleRow);
  };
}
