import { fileURLToPath } from 'node:url';
import { loadMigrations, renderMigration, type Migration } from '../sql-migrations.js';
import { installStep, type InstallRecord, type SqlInstall } from '../sql-install.js';
import { withPooledTransaction, type PgPool } from './pg-executor.js';
import type { PostgresNaming } from './postgres-naming.js';

const MIGRATIONS_DIR = fileURLToPath(new URL('./migrations/', import.meta.url));

/**
 * Applies the migrations this database has not seen, in one transaction under an advisory lock,
 * so nodes that boot together take turns and the second finds nothing left to do. `install`
 * (functions and triggers, re-created by every boot that may) runs last, under the same lock, and
 * only when no newer version is installed (see installStep): an older node booting during a
 * rolling deploy leaves the newer functions in place, or refuses to boot, writing nothing.
 */
export async function migratePostgres(
  pool: PgPool,
  naming: PostgresNaming,
  install: SqlInstall,
  migrations: readonly Migration[] = loadMigrations(MIGRATIONS_DIR),
): Promise<number[]> {
  return withPooledTransaction(pool, async (client) => {
    await client.query({ text: 'SELECT pg_advisory_xact_lock(hashtext($1))', values: [naming.lockKey] });
    await client.query({ text: `CREATE SCHEMA IF NOT EXISTS "${naming.schema}"` });
    await client.query({
      text: `CREATE TABLE IF NOT EXISTS ${naming.migrations} (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
    });
    // One row: the install the functions and triggers come from.
    await client.query({
      text: `CREATE TABLE IF NOT EXISTS ${naming.installed} (one boolean PRIMARY KEY DEFAULT true CHECK (one), version integer NOT NULL,
               compatible_from integer NOT NULL, installed_at timestamptz NOT NULL DEFAULT now())`,
    });
    const { rows } = await client.query({ text: `SELECT version FROM ${naming.migrations}` });
    const applied = new Set((rows as { version: number }[]).map((row) => row.version));
    const { rows: installed } = await client.query({ text: `SELECT version, compatible_from AS "compatibleFrom" FROM ${naming.installed}` });
    const unseen = migrations.filter((migration) => !applied.has(migration.version));
    const where = `schema ${naming.schema}${naming.prefix ? ` (prefix ${naming.prefix})` : ''}`;
    const step = installStep(installed[0] as InstallRecord | undefined, install, unseen.map((migration) => migration.version), where);
    if (step === 'keep') return [];
    for (const migration of unseen) {
      await client.query({ text: renderMigration(migration.sql, naming) });
      await client.query({ text: `INSERT INTO ${naming.migrations} (version, name) VALUES ($1, $2)`, values: [migration.version, migration.name] });
    }
    await client.query({ text: install.sql });
    await client.query({
      text: `INSERT INTO ${naming.installed} (version, compatible_from) VALUES ($1, $2)
             ON CONFLICT (one) DO UPDATE SET version = EXCLUDED.version, compatible_from = EXCLUDED.compatible_from, installed_at = now()`,
      values: [install.version, install.compatibleFrom],
    });
    return unseen.map((migration) => migration.version);
  });
}
