import { describe } from '@jest/globals';
import { PostgresJobStore } from '../../lib/store/index.js';
import { databaseUrl, dropSchemas, openPostgresDataSource, uniqueSchema } from '../support/postgres.js';
import { cliBadInputCases } from './bad-input-cli.cases.js';
import { HOSTILE } from './hostile.js';

describe('the durable-scheduler CLI with bad input, on PostgreSQL', () => {
  cliBadInputCases(async () => {
    const schema = uniqueSchema('badcli');
    const dataSource = await openPostgresDataSource(3);
    const store = new PostgresJobStore({ dataSource, schema, tablePrefix: 'ops_' });
    await store.migrate();
    const hostile = Object.values(HOSTILE);
    return {
      kind: 'postgres',
      conn: databaseUrl(),
      table: `${schema}.ops_jobs`,
      freshConn: databaseUrl(),
      // Nothing named after a hostile value: no schema, and no table in any schema.
      freshUntouched: async () => {
        const [row] = await dataSource.query(
          `SELECT (SELECT count(*) FROM information_schema.schemata WHERE schema_name = ANY($1))
                + (SELECT count(*) FROM information_schema.tables WHERE table_name = ANY($1) OR table_name LIKE ANY($2)) AS n`,
          [hostile, hostile.map((h) => `${h.replace(/[\\%_]/g, (c) => `\\${c}`)}%`)],
        );
        return Number(row.n) === 0;
      },
      store,
      snapshot: async () => {
        const rows: Record<string, unknown> = {};
        const tables = (await dataSource.query(`SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY 1`, [schema])) as { table_name: string }[];
        for (const { table_name: table } of tables) {
          rows[table] = await dataSource.query(`SELECT to_jsonb(t) AS row FROM "${schema}"."${table}" t ORDER BY to_jsonb(t)::text`);
        }
        return rows;
      },
      cleanup: async () => {
        await store.close();
        await dropSchemas(dataSource, [schema]);
        await dataSource.destroy();
      },
    };
  });
});
