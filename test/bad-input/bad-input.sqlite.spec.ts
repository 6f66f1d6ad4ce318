import { describe } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { SqliteJobStore } from '../../lib/store/index.js';
import { badInputCases, STORE_LIMITS } from './bad-input.cases.js';

describe('bad input on SQLite', () => {
  badInputCases(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'durable-scheduler-bad-input-'));
    const dataSource = await new DataSource({ type: 'better-sqlite3', database: join(dir, 'bad-input.db') }).initialize();
    /** Every table in the file, whatever the migrations created. */
    const tables = async () =>
      ((await dataSource.query(`SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`)) as { name: string }[]).map((t) => t.name);
    return {
      name: 'sqlite',
      async open() {
        const store = new SqliteJobStore({ dataSource, tablePrefix: 'bad_', limits: STORE_LIMITS });
        await store.migrate();
        return {
          store,
          dataSource,
          tables,
          snapshot: async () => {
            const rows: Record<string, unknown> = {};
            for (const table of await tables()) rows[table] = await dataSource.query(`SELECT * FROM "${table}" ORDER BY rowid`);
            return rows;
          },
        };
      },
      async teardown() {
        await dataSource.destroy();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  });
});
