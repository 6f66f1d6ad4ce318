import type { Database } from 'better-sqlite3';
import type { SqliteNaming } from '../sqlite-naming.js';

/**
 * The newest migration applied, or null before the first migrate. Prepared on each call: the
 * migrations table may not exist yet.
 */
export function schemaVersionQuery(db: Database, t: SqliteNaming) {
  return (): number | null => {
    const name = t.prefix + 'migrations';
    const exists = db.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?`).pluck().get(name);
    if (!exists) return null;
    return (db.prepare(`SELECT max(version) FROM ${t.migrations}`).pluck().get() as number | null) ?? null;
  };
}
