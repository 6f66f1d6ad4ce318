import type { Database } from 'better-sqlite3';
import type { SqliteNaming } from '../sqlite-naming.js';

/** Sets the limit on `key` to `max`, or removes it (`null`). */
export function setLimitQuery(db: Database, t: SqliteNaming) {
  const setLimit = db.prepare(`INSERT INTO ${t.limits} (key, max, updated_at) VALUES (?, ?, ?) ON CONFLICT (key) DO UPDATE SET max = excluded.max, updated_at = excluded.updated_at`);
  const dropLimit = db.prepare(`DELETE FROM ${t.limits} WHERE key = ?`);
  return (key: string, max: number | null, now: number): void => {
    if (max === null) dropLimit.run(key);
    else setLimit.run(key, max, now);
  };
}
