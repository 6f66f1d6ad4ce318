import { describe } from '@jest/globals';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { SqliteJobStore } from '../../lib/store/index.js';
import { cliBadInputCases } from './bad-input-cli.cases.js';

describe('the durable-scheduler CLI with bad input, on SQLite', () => {
  cliBadInputCases(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'durable-scheduler-bad-cli-'));
    const database = join(dir, 'ops.db');
    const fresh = join(dir, 'never-created.db');
    const dataSource = await new DataSource({ type: 'better-sqlite3', database }).initialize();
    const store = new SqliteJobStore({ dataSource, tablePrefix: 'ops_' });
    await store.migrate();
    return {
      kind: 'sqlite',
      conn: `sqlite:${database}`,
      table: 'ops_jobs',
      freshConn: `sqlite:${fresh}`,
      freshUntouched: async () => !existsSync(fresh),
      store,
      snapshot: async () => {
        const rows: Record<string, unknown> = {};
        const tables = (await dataSource.query(`SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`)) as { name: string }[];
        for (const { name } of tables) rows[name] = await dataSource.query(`SELECT * FROM "${name}" ORDER BY rowid`);
        return rows;
      },
      cleanup: async () => {
        await dataSource.destroy();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  });
});
