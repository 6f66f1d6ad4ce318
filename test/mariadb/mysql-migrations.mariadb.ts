import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { DataSource } from 'typeorm';
import { IncompatibleSchemaError, StoreBusyError, StoreUnavailableError } from '../../lib/core/index.js';
import { MysqlJobStore } from '../../lib/store/index.js';
import { LATEST_SCHEMA_VERSION, loadMigrations } from '../../lib/store/sql-migrations.js';
import { MysqlConnections } from '../../lib/store/mysql/mysql-connections.js';
import { MYSQL_INSTALL_VERSION, mysqlInstall } from '../../lib/store/mysql/mysql-install.js';
import { migrateMysql } from '../../lib/store/mysql/mysql-migrator.js';
import { mysqlNaming, type MysqlNaming } from '../../lib/store/mysql/mysql-naming.js';
import { dropInstallation, openMariadbDataSource, uniquePrefix } from '../support/mariadb.js';
import { fileURLToPath } from 'node:url';

const MIGRATIONS = loadMigrations(fileURLToPath(new URL('../../lib/store/mysql/migrations/', import.meta.url)));
/** The MySQL store's migrations: its schema at 19 (the version the other stores had reached when it came), and each one since. */
const VERSIONS = MIGRATIONS.map((m) => m.version);
const TABLES = [
  'audit_log', 'concurrency_limits', 'dependencies', 'installed', 'job_count_deltas', 'job_counts', 'job_history',
  'jobs', 'locks', 'maintenance', 'migrations', 'nodes', 'observer_cursors', 'queues', 'rate_limits', 'rate_starts', 'schedules', 'sequences',
];

describe('MySQL store migrations (MariaDB)', () => {
  let dataSource: DataSource;
  const made: MysqlNaming[] = [];
  const connections: MysqlConnections[] = [];
  const install = (prefix = uniquePrefix('mig')) => {
    const naming = mysqlNaming(prefix);
    made.push(naming);
    const conns = new MysqlConnections(dataSource, 3);
    connections.push(conns);
    return { naming, conns };
  };
  const tablesOf = async (naming: MysqlNaming) =>
    ((await dataSource.query(`SELECT table_name AS name FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name LIKE ?`, [`${naming.prefix}%`])) as { name: string }[])
      .map((r) => r.name.slice(naming.prefix.length))
      .sort();

  beforeAll(async () => {
    dataSource = await openMariadbDataSource();
  });
  afterAll(async () => {
    await Promise.all(connections.map((c) => c.close()));
    for (const naming of made) await dropInstallation(dataSource, naming);
    await dataSource.destroy();
  });

  it('creates every table once, at the version the other SQL stores have reached, and a second run applies nothing', async () => {
    const { naming, conns } = install();
    expect(await migrateMysql(conns, naming, mysqlInstall())).toEqual(VERSIONS);
    expect(await tablesOf(naming)).toEqual(TABLES);
    expect(await migrateMysql(conns, naming, mysqlInstall())).toEqual([]);
    expect(await dataSource.query(`SELECT version FROM ${naming.migrations} ORDER BY version`)).toEqual(VERSIONS.map((version) => ({ version })));
    expect(VERSIONS.at(-1)).toBe(LATEST_SCHEMA_VERSION);
    // Every table is InnoDB (row locks, SKIP LOCKED) with the binary utf8mb4 collation.
    const engines = (await dataSource.query(
      `SELECT DISTINCT engine, table_collation AS collation FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name LIKE ?`,
      [`${naming.prefix}%`],
    )) as unknown[];
    expect(engines).toEqual([{ engine: 'InnoDB', collation: 'utf8mb4_bin' }]);
  });

  it('migration 23 (batches) keeps each stored dependency mode, adds on_failure and the batch columns; migration 24 (groups) adds group_key and records install version 6; migration 25 indexes the group of a scheduled job', async () => {
    const { naming, conns } = install();
    expect(await migrateMysql(conns, naming, mysqlInstall(), MIGRATIONS.filter((m) => m.version <= 22))).toEqual(VERSIONS.filter((v) => v <= 22));
    const id = '01900000-0000-7000-8000-000000000001';
    await dataSource.query(
      `INSERT INTO ${naming.jobs} (id, name, queue, payload, run_at, scheduled_for, max_attempts, created_at, updated_at, pending_parents, dependency_mode, state)
       VALUES (?, 'n', 'default', '{}', UTC_TIMESTAMP(3), UTC_TIMESTAMP(3), 1, UTC_TIMESTAMP(3), UTC_TIMESTAMP(3), 1, 'on_any_terminal', 'awaiting_parents')`,
      [id],
    );
    expect(await migrateMysql(conns, naming, mysqlInstall(), MIGRATIONS.filter((m) => m.version <= 25))).toEqual([23, 24, 25]);
    const columns = `dependency_mode AS mode, batch_id AS batchId, batch_callback AS callback, parent_failed AS parentFailed`;
    expect(await dataSource.query(`SELECT ${columns} FROM ${naming.jobs}`)).toEqual([{ mode: 'on_any_terminal', batchId: null, callback: null, parentFailed: 0 }]);
    await dataSource.query(`UPDATE ${naming.jobs} SET dependency_mode = 'on_failure', batch_id = ?, batch_callback = 'failure', parent_failed = TRUE`, [id]);
    expect(await dataSource.query(`SELECT ${columns} FROM ${naming.jobs}`)).toEqual([{ mode: 'on_failure', batchId: id, callback: 'failure', parentFailed: 1 }]);
    const indexed = (await dataSource.query(
      `SELECT column_name AS name FROM information_schema.statistics WHERE table_schema = DATABASE() AND table_name = ? AND index_name = 'jobs_batch_idx' ORDER BY seq_in_index`,
      [`${naming.prefix}jobs`],
    )) as { name: string }[];
    expect(indexed.map((r) => r.name)).toEqual(['batch_id']);
    expect(await dataSource.query(`SELECT group_key AS g FROM ${naming.jobs}`)).toEqual([{ g: null }]);
    expect(await dataSource.query(`SELECT version FROM ${naming.table('installed')}`)).toEqual([{ version: MYSQL_INSTALL_VERSION }]);
    // Migration 25 (group listing): the group of a scheduled job alone, indexed with its run time.
    const grouped = (await dataSource.query(
      `SELECT column_name AS name FROM information_schema.statistics WHERE table_schema = DATABASE() AND table_name = ? AND index_name = 'jobs_group_idx' ORDER BY seq_in_index`,
      [`${naming.prefix}jobs`],
    )) as { name: string }[];
    expect(grouped.map((r) => r.name)).toEqual(['waiting_group_key', 'waiting_group_run_at', 'seq']);
    await dataSource.query(`UPDATE ${naming.jobs} SET group_key = 'g', state = 'scheduled', pending_parents = 0`);
    expect(await dataSource.query(`SELECT waiting_group_key AS g, waiting_group_run_at = run_at AS at FROM ${naming.jobs}`)).toEqual([{ g: Buffer.from('g'), at: 1 }]);
    await dataSource.query(`UPDATE ${naming.jobs} SET group_key = NULL`);
    expect(await dataSource.query(`SELECT waiting_group_key AS g, waiting_group_run_at AS at FROM ${naming.jobs}`)).toEqual([{ g: null, at: null }]);
  });

  it('migration 26 gives the history the worker and lease deadline, NULL on entries written before it, indexes the audit log by action, and records install version 7', async () => {
    const { naming, conns } = install();
    expect(await migrateMysql(conns, naming, mysqlInstall(), MIGRATIONS.filter((m) => m.version <= 25))).toEqual(VERSIONS.filter((v) => v <= 25));
    await dataSource.query(`INSERT INTO ${naming.history} (job_id, name, at, state, attempt) VALUES ('01900000-0000-7000-8000-000000000001', 'n', UTC_TIMESTAMP(3), 'succeeded', 1)`);
    expect(await migrateMysql(conns, naming, mysqlInstall(), MIGRATIONS.filter((m) => m.version <= 26))).toEqual([26]);
    expect(await dataSource.query(`SELECT state, worker_id AS w, lease_until AS l FROM ${naming.history}`)).toEqual([{ state: 'succeeded', w: null, l: null }]);
    const byAction = (await dataSource.query(
      `SELECT column_name AS name FROM information_schema.statistics WHERE table_schema = DATABASE() AND table_name = ? AND index_name = 'audit_log_action_idx' ORDER BY seq_in_index`,
      [`${naming.prefix}audit_log`],
    )) as { name: string }[];
    expect(byAction.map((r) => r.name)).toEqual(['action', 'id']);
    // Batches (migration 0023) took the MySQL install version from 4 to 5, groups (0024) to 6, the lease in the history (0026) to 7.
    expect(MYSQL_INSTALL_VERSION).toBe(7);
    expect(await dataSource.query(`SELECT version FROM ${naming.table('installed')}`)).toEqual([{ version: 7 }]);
  });

  it('lets nodes that boot together take turns under the lock: each finishes, and every migration is applied once', async () => {
    const prefix = uniquePrefix('race');
    const nodes = [install(prefix), install(prefix), install(prefix), install(prefix)];
    const applied = await Promise.all(nodes.map(({ naming, conns }) => migrateMysql(conns, naming, mysqlInstall())));
    expect(applied.flat().sort((a, b) => a - b)).toEqual(VERSIONS);
    expect(await tablesOf(nodes[0]!.naming)).toEqual(TABLES);
  });

  it('finishes a migration that a node cut short: the statements it ran are run again without error', async () => {
    const { naming, conns } = install();
    // A node died after the first statements of migration 19: the jobs and queues tables exist, nothing is recorded.
    const first = MIGRATIONS.find((m) => m.version === 19)!.sql.split('CREATE TABLE IF NOT EXISTS {{dependencies}}')[0]!;
    await migrateMysql(conns, naming, mysqlInstall(), [{ version: 19, name: 'schema', sql: first }]);
    await dataSource.query(`DELETE FROM ${naming.migrations}`);
    expect(await tablesOf(naming)).toEqual(['installed', 'jobs', 'migrations', 'queues']);
    expect(await migrateMysql(conns, naming, mysqlInstall())).toEqual(VERSIONS);
    expect(await tablesOf(naming)).toEqual(TABLES);
  });

  it('gives up with StoreBusyError, applying nothing, while another session holds the lock past the wait', async () => {
    const { naming, conns } = install();
    const holder = dataSource.createQueryRunner();
    try {
      const lockName = `CONCAT('durable_scheduler.', SHA1(CONCAT(DATABASE(), '.', ?)))`;
      expect(await holder.query(`SELECT GET_LOCK(${lockName}, 0) AS got`, [naming.prefix])).toEqual([{ got: 1 }]);
      await expect(migrateMysql(conns, naming, mysqlInstall(), undefined, 0)).rejects.toThrow(StoreBusyError);
      expect(await tablesOf(naming)).toEqual([]);
      // The server frees a lock whose session ends, so a node killed while migrating never blocks the next.
      const [{ id }] = (await holder.query('SELECT CONNECTION_ID() AS id')) as { id: number }[];
      await dataSource.query(`KILL CONNECTION ${Number(id)}`);
      expect(await migrateMysql(conns, naming, mysqlInstall(), undefined, 5)).toEqual(VERSIONS);
    } finally {
      await holder.release().catch(() => undefined);
    }
  });

  it('refuses a database that does not exist, and reads before migrate, in one typed sentence each', async () => {
    const nowhere = new MysqlJobStore({ dataSource, database: 'no_such_database_here', tablePrefix: uniquePrefix('nodb') });
    const unmigrated = new MysqlJobStore({ dataSource, tablePrefix: uniquePrefix('unmigrated') });
    try {
      await expect(nowhere.migrate()).rejects.toThrow(new StoreUnavailableError('The database "no_such_database_here" does not exist on the server; create it, or name another.'));
      await expect(unmigrated.jobList({})).rejects.toThrow(StoreUnavailableError);
      await expect(unmigrated.jobList({})).rejects.toThrow(/^The scheduler's tables do not exist/);
    } finally {
      await Promise.all([nowhere.close(), unmigrated.close()]);
    }
  });

  it('refuses tables a newer, incompatible version installed, writing nothing', async () => {
    const { naming, conns } = install();
    await migrateMysql(conns, naming, mysqlInstall());
    await dataSource.query(`UPDATE ${naming.table('installed')} SET version = 99, compatible_from = 99`);
    await expect(migrateMysql(conns, naming, mysqlInstall())).rejects.toThrow(IncompatibleSchemaError);
    expect(await dataSource.query(`SELECT version FROM ${naming.table('installed')}`)).toEqual([{ version: 99 }]);
  });
});
