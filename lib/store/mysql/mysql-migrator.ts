import { fileURLToPath } from 'node:url';
import { StoreBusyError, StoreUnavailableError } from '../../core/index.js';
import { installStep, type InstallRecord, type SqlInstall } from '../sql-install.js';
import { loadMigrations, renderMigration, type Migration } from '../sql-migrations.js';
import type { MysqlConnections } from './mysql-connections.js';
import type { MysqlExecutor } from './mysql-executor.js';
import type { MysqlNaming } from './mysql-naming.js';

const MIGRATIONS_DIR = fileURLToPath(new URL('./migrations/', import.meta.url));

/** How long a booting node waits for another node's migration before giving up. */
export const MYSQL_MIGRATION_LOCK_SECONDS = 60;

/**
 * Applies unseen migrations under a named lock (GET_LOCK) that one session holds for the whole
 * run, so nodes that boot together take turns and the later ones find nothing left to do. The lock
 * belongs to the session, not to a transaction (MySQL commits DDL on its own, so a transaction
 * could not hold it across the migration), and the server frees it if the session dies, so a node
 * killed half-way never leaves it held. Returns the versions it applied.
 *
 * Each migration runs whole in one query (the store's sessions allow several statements in one).
 */
export async function migrateMysql(
  connections: MysqlConnections,
  naming: MysqlNaming,
  install: SqlInstall,
  migrations: readonly Migration[] = loadMigrations(MIGRATIONS_DIR),
  lockSeconds = MYSQL_MIGRATION_LOCK_SECONDS,
): Promise<number[]> {
  return connections.session(async (db) => {
    const lock = `CONCAT('durable_scheduler.', SHA1(CONCAT(COALESCE(?, DATABASE()), '.', ?)))`;
    const lockArgs = [naming.database, naming.prefix];
    const [taken] = await db.query<{ got: number | null }>(`SELECT GET_LOCK(${lock}, ?) AS got`, [...lockArgs, lockSeconds]);
    if (taken?.got !== 1) {
      throw new StoreBusyError(
        `Another node held the migration lock of tables ${naming.jobs} for ${lockSeconds} s, so this node applied nothing; start it again once that node's migration ends.`,
      );
    }
    try {
      return await applyUnseen(db, naming, install, migrations);
    } finally {
      // A session that cannot release the lock is discarded, which releases it on the server.
      await db.query(`SELECT RELEASE_LOCK(${lock})`, lockArgs).catch((error: unknown) => {
        throw new StoreUnavailableError('The store could not release its migration lock; its session is discarded, which frees the lock.', { cause: error });
      });
    }
  });
}

async function applyUnseen(db: MysqlExecutor, naming: MysqlNaming, install: SqlInstall, migrations: readonly Migration[]): Promise<number[]> {
  await db.run(
    `CREATE TABLE IF NOT EXISTS ${naming.migrations} (version INT NOT NULL PRIMARY KEY, name VARCHAR(255) NOT NULL, applied_at DATETIME(3) NOT NULL)
     ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin`,
  );
  // One row: the install version the code that last migrated came from (sql-install.ts).
  await db.run(
    `CREATE TABLE IF NOT EXISTS ${naming.table('installed')} (one TINYINT NOT NULL PRIMARY KEY CHECK (one = 1), version INT NOT NULL, compatible_from INT NOT NULL, installed_at DATETIME(3) NOT NULL)
     ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin`,
  );
  const applied = new Set((await db.query<{ version: number }>(`SELECT version FROM ${naming.migrations}`)).map((r) => r.version));
  const [recorded] = await db.query<InstallRecord>(`SELECT version, compatible_from AS compatibleFrom FROM ${naming.table('installed')}`);
  const unseen = migrations.filter((migration) => !applied.has(migration.version));
  const where = `${naming.database === null ? '' : `database ${naming.database}, `}prefix ${naming.prefix}`;
  if (installStep(recorded, install, unseen.map((m) => m.version), where) === 'keep') return [];
  for (const migration of unseen) {
    // Each statement commits on its own; the file is written so that a second run completes a first one cut short.
    await db.run(renderMigration(migration.sql, naming));
    await db.run(`INSERT INTO ${naming.migrations} (version, name, applied_at) VALUES (?, ?, UTC_TIMESTAMP(3))`, [migration.version, migration.name]);
  }
  await db.run(
    `INSERT INTO ${naming.table('installed')} (one, version, compatible_from, installed_at) VALUES (1, ?, ?, UTC_TIMESTAMP(3))
     ON DUPLICATE KEY UPDATE version = VALUES(version), compatible_from = VALUES(compatible_from), installed_at = VALUES(installed_at)`,
    [install.version, install.compatibleFrom],
  );
  return unseen.map((m) => m.version);
}
