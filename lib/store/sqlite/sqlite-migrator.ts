import type { Database } from 'better-sqlite3';
import { fileURLToPath } from 'node:url';
import { loadMigrations, renderMigration, type Migration } from '../sql-migrations.js';
import { installStep, type InstallRecord, type SqlInstall } from '../sql-install.js';
import type { SqliteNaming } from './sqlite-naming.js';

const MIGRATIONS_DIR = fileURLToPath(new URL('./migrations/', import.meta.url));

/**
 * Applies unseen migrations inside one IMMEDIATE transaction, which takes SQLite's write lock, so
 * processes that start together on one file take turns. `install` (the triggers, re-created by
 * every boot that may) runs last in it, and only when no newer version is installed (see
 * installStep): an older process leaves the newer triggers in place, or refuses, writing nothing.
 */
export function migrateSqlite(
  db: Database,
  naming: SqliteNaming,
  install: SqlInstall,
  migrations: readonly Migration[] = loadMigrations(MIGRATIONS_DIR),
): number[] {
  const run = db.transaction(() => {
    db.exec(`CREATE TABLE IF NOT EXISTS ${naming.migrations} (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)`);
    // One row: the install the triggers come from.
    db.exec(
      `CREATE TABLE IF NOT EXISTS ${naming.installed} (one INTEGER PRIMARY KEY CHECK (one = 1), version INTEGER NOT NULL, compatible_from INTEGER NOT NULL, installed_at INTEGER NOT NULL)`,
    );
    const applied = new Set((db.prepare(`SELECT version FROM ${naming.migrations}`).all() as { version: number }[]).map((r) => r.version));
    const recorded = db.prepare(`SELECT version, compatible_from AS compatibleFrom FROM ${naming.installed}`).get() as InstallRecord | undefined;
    const unseen = migrations.filter((migration) => !applied.has(migration.version));
    const step = installStep(recorded, install, unseen.map((migration) => migration.version), `prefix ${naming.prefix}`);
    if (step === 'keep') return [];
    const record = db.prepare(`INSERT INTO ${naming.migrations} (version, name, applied_at) VALUES (?, ?, CAST(unixepoch('subsec') * 1000 AS INTEGER))`);
    for (const migration of unseen) {
      db.exec(renderMigration(migration.sql, naming));
      record.run(migration.version, migration.name);
    }
    db.exec(install.sql);
    db.prepare(
      `INSERT INTO ${naming.installed} (one, version, compatible_from, installed_at) VALUES (1, ?, ?, CAST(unixepoch('subsec') * 1000 AS INTEGER))
       ON CONFLICT (one) DO UPDATE SET version = excluded.version, compatible_from = excluded.compatible_from, installed_at = excluded.installed_at`,
    ).run(install.version, install.compatibleFrom);
    return unseen.map((migration) => migration.version);
  });
  return run.immediate();
}
