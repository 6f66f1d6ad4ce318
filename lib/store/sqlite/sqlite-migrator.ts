import type { Database } from 'better-sqlite3';
import { fileURLToPath } from 'node:url';
import { loadMigrations, renderMigration, type Migration } from '../sql-migrations.js';
import type { SqliteNaming } from './sqlite-naming.js';

const MIGRATIONS_DIR = fileURLToPath(new URL('./migrations/', import.meta.url));

/**
 * Applies unseen migrations inside one IMMEDIATE transaction, which takes SQLite's write lock, so
 * processes that start together on one file take turns.
 */
export function migrateSqlite(
  db: Database,
  naming: SqliteNaming,
  install = '',
  migrations: readonly Migration[] = loadMigrations(MIGRATIONS_DIR),
): number[] {
  const run = db.transaction(() => {
    db.exec(`CREATE TABLE IF NOT EXISTS ${naming.migrations} (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)`);
    const applied = new Set((db.prepare(`SELECT version FROM ${naming.migrations}`).all() as { version: number }[]).map((r) => r.version));
    const ran: number[] = [];
    const record = db.prepare(`INSERT INTO ${naming.migrations} (version, name, applied_at) VALUES (?, ?, CAST(unixepoch('subsec') * 1000 AS INTEGER))`);
    for (const migration of migrations) {
      if (applied.has(migration.version)) continue;
      db.exec(renderMigration(migration.sql, naming));
      record.run(migration.version, migration.name);
      ran.push(migration.version);
    }
    if (install) db.exec(install);
    return ran;
  });
  return run.immediate();
}
