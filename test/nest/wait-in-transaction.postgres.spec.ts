import { describe } from '@jest/globals';
import { databaseUrl, dropSchemas, openPostgresDataSource, uniqueSchema } from '../support/postgres.js';
import { waitInTransactionCases } from './wait-in-transaction.cases.js';

describe('waitFor inside a transaction on PostgreSQL', () => {
  waitInTransactionCases(async () => {
    const appSchema = uniqueSchema('app');
    const schedulerSchema = uniqueSchema('sched');
    const admin = await openPostgresDataSource(2);
    await admin.query(`CREATE SCHEMA "${appSchema}"`);
    return {
      typeorm: async () => ({ type: 'postgres', url: databaseUrl(), schema: appSchema, extra: { max: 8 } }),
      scheduler: { schema: schedulerSchema },
      cleanup: async () => {
        await dropSchemas(admin, [appSchema, schedulerSchema]);
        await admin.destroy();
      },
    };
  });
});
