import type { Database } from 'better-sqlite3';
import type { SqliteNaming } from '../sqlite-naming.js';

/**
 * Sets the limit on `key` to `max`, or removes it (`null`), and answers whether it changed: a max
 * the limit already has, or a removal where there is none, writes nothing.
 */
export function setLimitQuery(db: Database, t: SqliteNaming) {
  const setLimit = db.prepare(
    `INSERT INTO ${t.limits} (key, max, updated_at) VALUES (?, ?, ?) ON CONFLICT (key) DO UPDATE SET max = excluded.max, updated_at = excluded.updated_at WHERE max IS NOT excluded.max`,
  );
  const dropLimit = db.prepare(`DELETE FROM ${t.limits} WHERE key = ?`);
  return (key: string, max: number | null, now: number): boolean => {
    if (max === null) return dropLimit.run(key).changes > 0;
    return setLimit.run(key, max, now).changes > 0;
  };
}
