import { describe } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { SqliteJobStore } from '../../lib/store/index.js';
import { cliCases } from './cli.cases.js';

describe('the durable-scheduler CLI on SQLite', () => {
  cliCases(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'durable-scheduler-cli-'));
    const database = join(dir, 'ops.db');
    const dataSource = await new DataSource({ type: 'better-sqlite3', database }).initialize();
    const store = new SqliteJobStore({ dataSource, tablePrefix: 'ops_' });
    await store.migrate();
    const leanStore = new SqliteJobStore({ dataSource, tablePrefix: 'ops_', finish: 'lean' });
    const tables = ['ops_jobs', 'ops_queues', 'ops_schedules', 'ops_audit_log'];
    return {
      conn: `sqlite:${database}`,
      table: 'ops_jobs',
      store,
      leanStore,
      snapshot: async () => Promise.all(tables.map((t) => dataSource.query(`SELECT * FROM ${t} ORDER BY rowid`))),
      cleanup: async () => {
        await dataSource.destroy();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  });
});
