import type { Database } from 'better-sqlite3';
import type { ScheduleRow } from '../../schedules/index.js';
import type { SqliteNaming } from '../sqlite-naming.js';
import { fromSqliteScheduleRow, type SqliteScheduleRow } from '../sqlite-schedule-row.js';

/**
 * One page of schedules, oldest first, through the (created_at, id) index (migration 0011): the
 * first page, or the schedules after the one `after` names. Null when `after` names no schedule.
 */
export function listSchedulesPageQuery(db: Database, t: SqliteNaming) {
  const first = db.prepare(`SELECT * FROM ${t.schedules} ORDER BY created_at, id LIMIT ?`);
  const anchor = db.prepare(`SELECT created_at, id FROM ${t.schedules} WHERE id = ?`);
  const after = db.prepare(`SELECT * FROM ${t.schedules} WHERE (created_at, id) > (@created, @id) ORDER BY created_at, id LIMIT @limit`);
  return (limit: number, afterId: string | null): ScheduleRow[] | null => {
    if (afterId === null) return (first.all(limit) as SqliteScheduleRow[]).map(fromSqliteScheduleRow);
    const place = anchor.get(afterId) as { created_at: number; id: string } | undefined;
    if (!place) return null;
    return (after.all({ created: place.created_at, id: place.id, limit }) as SqliteScheduleRow[]).map(fromSqliteScheduleRow);
  };
}
