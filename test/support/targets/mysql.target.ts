import type { DataSource } from 'typeorm';
import { MysqlJobStore, type MysqlJobStoreOptions } from '../../../lib/store/mysql/mysql-job-store.js';
import type { ConformanceTarget } from '../../../lib/store-kit/conformance/index.js';
import { dropInstallation, openMariadbDataSource, uniquePrefix } from '../mariadb.js';
import { MysqlPrefixPool } from './mysql-prefix-pool.js';

/** Shifts a DATETIME column back by `?` ms; the stand-in for "never" ('1000-01-01') stays as it is. */
const back = (column: string) => `${column} = CASE WHEN ${column} > '1000-01-02' THEN TIMESTAMPADD(MICROSECOND, -1000 * ?, ${column}) ELSE ${column} END`;

/**
 * One DataSource per test file on the MariaDB server; each opened store gets a table prefix of
 * its own, whose tables are emptied after its case and handed to a later case (MysqlPrefixPool),
 * and dropped at teardown.
 */
export async function mysqlTarget(through: { readonly store?: Pick<MysqlJobStoreOptions, 'poolSize'> } = {}): Promise<ConformanceTarget> {
  const dataSource: DataSource = await openMariadbDataSource({ poolSize: 24 });
  const pool = new MysqlPrefixPool(dataSource);
  let stores: MysqlJobStore[] = [];
  const discard = async () => {
    const closing = stores;
    stores = [];
    await Promise.all(closing.map((store) => store.close()));
    await pool.release(closing.map((store) => store.naming.prefix));
  };
  return {
    name: 'mariadb',
    async open(options) {
      const kind = options?.historyPolicy ?? 'default';
      const reused = pool.take(kind);
      const store = new MysqlJobStore({
        dataSource,
        tablePrefix: reused ?? uniquePrefix('conf'),
        limits: options?.limits,
        historyPolicy: options?.historyPolicy,
        finish: options?.finish,
        poolSize: 6,
        ...through.store,
      });
      stores.push(store);
      // On a reused installation this finds every migration applied: a few reads.
      await store.migrate();
      if (reused === undefined) await pool.adopt(store.naming.prefix, kind);
      const { jobs, queues, schedules, audit, history, dependencies, limits, cursors, maintenance, nodes, rateLimits, rateStarts } = store.naming;
      const shift = async (table: string, columns: readonly string[], ms: number) =>
        dataSource.query(`UPDATE ${table} SET ${columns.map(back).join(', ')}`, columns.map(() => ms));
      return {
        store,
        advance: async (ms) => {
          await shift(jobs, ['run_at', 'leased_until', 'created_at', 'updated_at', 'finished_at', 'window_ends_at'], ms);
          await shift(rateStarts, ['used_at'], ms);
          await shift(cursors, ['leased_until', 'retry_at', 'updated_at'], ms);
          await shift(maintenance, ['leased_until', 'updated_at'], ms);
          await shift(nodes, ['started_at', 'last_seen_at', 'stopped_at'], ms);
          await shift(schedules, ['next_fire_at', 'anchor_at', 'last_fired_for', 'last_skipped_for', 'created_at', 'updated_at'], ms);
        },
        snapshot: async () => ({
          jobs: await dataSource.query(`SELECT * FROM ${jobs} ORDER BY seq`),
          queues: await dataSource.query(`SELECT * FROM ${queues} ORDER BY name`),
          schedules: await dataSource.query(`SELECT * FROM ${schedules} ORDER BY id`),
          audit: Number((await dataSource.query(`SELECT count(*) AS n FROM ${audit}`))[0].n),
          history: Number((await dataSource.query(`SELECT count(*) AS n FROM ${history}`))[0].n),
          dependencies: await dataSource.query(`SELECT * FROM ${dependencies} ORDER BY child_id, parent_id`),
          limits: await dataSource.query(`SELECT * FROM ${limits} ORDER BY \`key\``),
          rateLimits: await dataSource.query(`SELECT * FROM ${rateLimits} ORDER BY \`key\``),
          rateStarts: await dataSource.query(`SELECT * FROM ${rateStarts} ORDER BY \`key\`, n`),
          cursors: await dataSource.query(`SELECT * FROM ${cursors} ORDER BY observer`),
        }),
        countJobs: async () => Number((await dataSource.query(`SELECT count(*) AS n FROM ${jobs}`))[0].n),
        hostTransaction: (work) => dataSource.transaction(work),
      };
    },
    cleanup: discard,
    async teardown() {
      await discard();
      for (const prefix of pool.drain()) await dropInstallation(dataSource, { prefix });
      await dataSource.destroy();
    },
  };
}
