import type { Database } from 'better-sqlite3';
import type { JobState } from '../../../core/index.js';
import type { SqliteNaming } from '../sqlite-naming.js';

/** One job's current state; undefined when it does not exist. */
export function jobStateQuery(db: Database, t: SqliteNaming) {
  const state = db.prepare(`SELECT state FROM ${t.jobs} WHERE id = ?`).pluck();
  return (id: string): JobState | undefined => state.get(id) as JobState | undefined;
}
