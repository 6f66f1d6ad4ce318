import type { ScheduleRow } from '../../schedules/index.js';
import type { MysqlExecutor } from '../mysql-executor.js';
import type { MysqlNaming } from '../mysql-naming.js';
import { fromMysqlScheduleRow, SCHEDULE_COLUMNS, type MysqlScheduleRow } from '../mysql-schedule-row.js';

/** One schedule by id, for an operator (no lock). */
export async function getSchedule(db: MysqlExecutor, t: MysqlNaming, id: string): Promise<ScheduleRow | null> {
  const [row] = await db.query<MysqlScheduleRow>(`SELECT ${SCHEDULE_COLUMNS} FROM ${t.schedules} WHERE id = ?`, [id]);
  return row ? fromMysqlScheduleRow(row) : null;
}
