import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { SqliteJobStore } from '../../../lib/store/index.js';
import type { ConformanceTarget } from '../../../lib/store-kit/conformance/index.js';

/**
 * One SQLite file per opened store, all in one temp folder per test file. Each store still gets a
 * table prefix of its own, so the suite goes on running the prefixed naming. One shared file for
 * the whole suite made every case slower than the one before it (43 ms at the start, 5.5 s per
 * case by the end, 1,753 s of a 72-minute `npm test`): each migrate adds a store's tables,
 * indexes and triggers to the one schema, and SQLite reads that whole schema again after every
 * change to it.
 */
export async function sqliteTarget(): Promise<ConformanceTarget> {
  const dir = mkdtempSync(join(tmpdir(), 'durable-scheduler-sqlite-'));
  const dataSources: DataSource[] = [];
  let opened = 0;
  return {
    name: 'sqlite',
    async open(options) {
      const prefix = `t${++opened}_`;
      const dataSource = await new DataSource({ type: 'better-sqlite3', database: join(dir, `store-${opened}.db`) }).initialize();
      dataSources.push(dataSource);
      const store = new SqliteJobStore({ dataSource, tablePrefix: prefix, limits: options?.limits, historyPolicy: options?.historyPolicy, finish: options?.finish });
      await store.migrate();
      const { jobs, queues, schedules, audit, history, dependencies, limits, cursors, maintenance, nodes, rateLimits, rateStarts } = store.naming;
      return {
        store,
        advance: async (ms) => {
          await dataSource.query(
            `UPDATE ${jobs} SET run_at = run_at - ?, leased_until = leased_until - ?, created_at = created_at - ?,
               updated_at = updated_at - ?, finished_at = finished_at - ?, window_ends_at = window_ends_at - ?`,
            [ms, ms, ms, ms, ms, ms],
          );
          await dataSource.query(`UPDATE ${cursors} SET leased_until = leased_until - ?, retry_at = retry_at - ?, updated_at = updated_at - ?`, [ms, ms, ms]);
          await dataSource.query(`UPDATE ${maintenance} SET leased_until = leased_until - ?, updated_at = updated_at - ?`, [ms, ms]);
          await dataSource.query(`UPDATE ${rateStarts} SET used_at = used_at - ?`, [ms]);
          await dataSource.query(`UPDATE ${nodes} SET started_at = started_at - ?, last_seen_at = last_seen_at - ?, stopped_at = stopped_at - ?`, [ms, ms, ms]);
          await dataSource.query(
            `UPDATE ${schedules} SET next_fire_at = next_fire_at - ?, anchor_at = anchor_at - ?, last_fired_for = last_fired_for - ?,
               last_skipped_for = last_skipped_for - ?, created_at = created_at - ?, updated_at = updated_at - ?`,
            [ms, ms, ms, ms, ms, ms],
          );
        },
        snapshot: async () => ({
          jobs: await dataSource.query(`SELECT * FROM ${jobs} ORDER BY seq`),
          queues: await dataSource.query(`SELECT * FROM ${queues} ORDER BY name`),
          schedules: await dataSource.query(`SELECT * FROM ${schedules} ORDER BY id`),
          audit: (await dataSource.query(`SELECT count(*) AS n FROM ${audit}`))[0].n,
          history: (await dataSource.query(`SELECT count(*) AS n FROM ${history}`))[0].n,
          dependencies: await dataSource.query(`SELECT * FROM ${dependencies} ORDER BY child_id, parent_id`),
          limits: await dataSource.query(`SELECT * FROM ${limits} ORDER BY key`),
          rateLimits: await dataSource.query(`SELECT * FROM ${rateLimits} ORDER BY key`),
          rateStarts: await dataSource.query(`SELECT * FROM ${rateStarts} ORDER BY key, n`),
          cursors: await dataSource.query(`SELECT * FROM ${cursors} ORDER BY observer`),
        }),
        countJobs: async () => Number((await dataSource.query(`SELECT count(*) AS n FROM ${jobs}`))[0].n),
        hostTransaction: (work) => dataSource.transaction(work),
      };
    },
    async teardown() {
      await Promise.all(dataSources.map((dataSource) => dataSource.destroy()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
