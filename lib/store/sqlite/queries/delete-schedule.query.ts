import type { Database } from 'better-sqlite3';
import type { SqliteNaming } from '../sqlite-naming.js';

/** Deletes a schedule; false when there was none. */
export function deleteScheduleQuery(db: Database, t: SqliteNaming) {
  const remove = db.prepare(`DELETE FROM ${t.schedules} WHERE id = ?`);
  return (id: string): boolean => remove.run(id).changes === 1;
}
