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
            const rows: Record<string, unknown> = {};
            for (const name of await tables()) {
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
