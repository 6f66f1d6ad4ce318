import type { Database } from 'better-sqlite3';
import type { SqliteNaming } from '../sqlite-naming.js';

/** Whether any of these jobs still has a dependant waiting on it: finishing it may release one. */
export function hasOpenEdgesQuery(db: Database, t: SqliteNaming) {
  const anyOpenEdge = db
    .prepare(`SELECT EXISTS (SELECT 1 FROM ${t.dependencies} WHERE settled = 0 AND parent_id IN (SELECT value FROM json_each(?)))`)
    .pluck();
  return (jobIds: readonly string[]): boolean => jobIds.length > 0 && anyOpenEdge.get(JSON.stringify(jobIds)) === 1;
}
