import { describe } from '@jest/globals';
import { PostgresJobStore } from '../../lib/store/index.js';
import { dropSchemas, openPostgresDataSource, uniqueSchema } from '../support/postgres.js';
import { badInputCases, STORE_LIMITS } from './bad-input.cases.js';
import { HOSTILE } from './hostile.js';

describe('bad input on PostgreSQL', () => {
  badInputCases(async () => {
    const dataSource = await openPostgresDataSource(4);
    const schema = uniqueSchema('bad');
    let store: PostgresJobStore | undefined;
    let ownTables: string[] | undefined;
    return {
      name: 'postgres',
      async open() {
        store = new PostgresJobStore({ dataSource, schema, limits: STORE_LIMITS });
        await store.migrate();
        const tables = async () =>
          (
            (await dataSource.query(
              // This file's schema, plus anything a refused boot could have created elsewhere: a
              // schema named after a hostile value, or tables with the never-created prefix.
              `SELECT table_schema || '.' || table_name AS name FROM information_schema.tables
                WHERE table_schema = $1 OR table_schema = ANY($2) OR table_name LIKE 'never\\_created\\_%'
                ORDER BY 1`,
              [schema, Object.values(HOSTILE)],
            )) as { name: string }[]
          ).map((t) => t.name);
        return {
          store,
          dataSource,
          tables,
          snapshot: async () => {
            // The store's own tables, listed once: a catalog scan costs a tenth of a second once
            // a run's schema churn has bloated pg_class, and the refused calls create no tables
            // (the boot cases check that with tables()).
            ownTables ??= (await tables()).filter((name) => name.startsWith(`${schema}.`));
            const rows: Record<string, unknown> = {};
            for (const name of ownTables) {
              const table = name.slice(schema.length + 1);
              rows[name] = await dataSource.query(`SELECT to_jsonb(t) AS row FROM "${schema}"."${table}" t ORDER BY to_jsonb(t)::text`);
            }
            return rows;
          },
        };
      },
      async teardown() {
        await store?.close();
        await dropSchemas(dataSource, [schema]);
        await dataSource.destroy();
      },
    };
  });
});
