import type { ScheduleRow } from '../../schedules/index.js';
import type { MysqlExecutor } from '../mysql-executor.js';
import type { MysqlNaming } from '../mysql-naming.js';
import { fromMysqlScheduleRow, SCHEDULE_COLUMNS, type MysqlScheduleRow } from '../mysql-schedule-row.js';

const COLUMNS = SCHEDULE_COLUMNS.split(', ').map((column) => `s.${column}`).join(', ');

/**
 * One page of schedules, oldest first, read in order from schedules_created_idx (created_at, id)
 * and stopped at the page size: the first page, or the schedules after the one `after` names. The
 * anchor is joined by its key, so the optimizer reads it first and the page is one range of the
 * index after its place; the comparison is spelt out, since MariaDB reads no index range for a row
 * comparison `(a, b) > (x, y)`. Null when `after` names no schedule.
 */
export async function listSchedulesPage(db: MysqlExecutor, t: MysqlNaming, limit: number, after: string | null): Promise<ScheduleRow[] | null> {
  if (after === null) {
    return (await db.query<MysqlScheduleRow>(`SELECT ${COLUMNS} FROM ${t.schedules} s ORDER BY s.created_at, s.id LIMIT ?`, [limit])).map(fromMysqlScheduleRow);
  }
  const rows = await db.query<MysqlScheduleRow>(
    `SELECT ${COLUMNS} FROM ${t.schedules} a
     JOIN ${t.schedules} s ON s.created_at > a.created_at OR (s.created_at = a.created_at AND s.id > a.id)
     WHERE a.id = ? ORDER BY s.created_at, s.id LIMIT ?`,
    [after, limit],
  );
  // An empty page is the end of the list, or a cursor that names nothing: only then ask which.
  if (rows.length === 0 && (await db.query(`SELECT 1 FROM ${t.schedules} WHERE id = ?`, [after])).length === 0) return null;
  return rows.map(fromMysqlScheduleRow);
}
