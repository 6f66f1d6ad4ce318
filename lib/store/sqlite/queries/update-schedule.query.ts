import type { Database } from 'better-sqlite3';
import type { ScheduleRow } from '../../schedules/index.js';
import type { SqliteNaming } from '../sqlite-naming.js';
import { SCHEDULE_COLUMNS, scheduleParams } from '../sqlite-schedule-row.js';

/** Writes a whole schedule back, as the schedule operation decided it. */
export function updateScheduleQuery(db: Database, t: SqliteNaming) {
  const update = db.prepare(`UPDATE ${t.schedules} SET ${SCHEDULE_COLUMNS.map((c) => `${c} = @${c}`).join(', ')} WHERE id = @id`);
  return (row: ScheduleRow): void => {
    update.run(scheduleParams(row));
  };
}
