import { fileURLToPath } from 'node:url';
import { loadMigrations, renderMigration, type Migration } from '../sql-migrations.js';
import { withPooledTransaction, type PgPool } from './pg-executor.js';
import type { PostgresNaming } from './postgres-naming.js';

const MIGRATIONS_DIR = fileURLToPath(new URL('./migrations/', import.meta.url));

/**
 * Applies the migrations this database has not seen, in one transaction under an advisory lock,
 * so nodes that boot together take turns and the second finds nothing left to do. `install`
 * (functions and triggers that are re-created on every boot) runs last, under the same lock.
 */
export async function migratePostgres(
  pool: PgPool,
  naming: PostgresNaming,
  install = '',
  migrations: readonly Migration[] = loadMigrations(MIGRATIONS_DIR),
): Promise<number[]> {
  return withPooledTransaction(pool, async (client) => {
    await client.query({ text: 'SELECT pg_advisory_xact_lock(hashtext($1))', values: [naming.lockKey] });
    await client.query({ text: `CREATE SCHEMA IF NOT EXISTS "${naming.schema}"` });
    await client.query({
      text: `CREATE TABLE IF NOT EXISTS ${naming.migrations} (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
    });
    const { rows } = await client.query({ text: `SELECT version FROM ${naming.migrations}` });
    const applied = new Set((rows as { version: number }[]).map((row) => row.version));
    const ran: number[] = [];
    for (const migration of migrations) {
      if (applied.has(migration.version)) continue;
      await client.query({ text: renderMigration(migration.sql, naming) });
      await client.query({ text: `INSERT INTO ${naming.migrations} (version, name) VALUES ($1, $2)`, values: [migration.version, migration.name] });
      ran.push(migration.version);
    }
    if (install) await client.query({ text: install });
    return ran;
  });
}
