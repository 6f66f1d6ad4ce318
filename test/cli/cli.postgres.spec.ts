import { describe } from '@jest/globals';
import { PostgresJobStore } from '../../lib/store/index.js';
import { databaseUrl, dropSchemas, openPostgresDataSource, uniqueSchema } from '../support/postgres.js';
import { cliCases } from './cli.cases.js';

describe('the durable-scheduler CLI on PostgreSQL', () => {
  cliCases(async () => {
    const schema = uniqueSchema('cli');
    const dataSource = await openPostgresDataSource(3);
    const store = new PostgresJobStore({ dataSource, schema, tablePrefix: 'ops_' });
    await store.migrate();
    const leanStore = new PostgresJobStore({ dataSource, schema, tablePrefix: 'ops_', finish: 'lean' });
    const tables = ['ops_jobs', 'ops_queues', 'ops_schedules', 'ops_audit_log'];
    return {
      conn: databaseUrl(),
      table: `${schema}.ops_jobs`,
      store,
      leanStore,
      snapshot: async () => Promise.all(tables.map((t) => dataSource.query(`SELECT to_jsonb(x) AS row FROM "${schema}"."${t}" x ORDER BY 1`))),
      cleanup: async () => {
        await store.close();
        await leanStore.close();
        await dropSchemas(dataSource, [schema]);
        await dataSource.destroy();
      },
    };
  });
});
