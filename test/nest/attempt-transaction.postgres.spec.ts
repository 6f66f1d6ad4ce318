import { describe } from '@jest/globals';
import { PostgresJobStore } from '../../lib/index.js';
import { databaseUrl, dropSchemas, openPostgresDataSource, uniqueSchema } from '../support/postgres.js';
import { attemptTransactionCases } from './attempt-transaction.cases.js';

describe('attempt transactions on PostgreSQL', () => {
  attemptTransactionCases(async () => {
    const appSchema = uniqueSchema('app');
    const schedulerSchema = uniqueSchema('sched');
    const admin = await openPostgresDataSource(2);
    await admin.query(`CREATE SCHEMA "${appSchema}"`);
    return {
      typeorm: async () => ({ type: 'postgres', url: databaseUrl(), schema: appSchema, extra: { max: 8 } }),
      scheduler: { schema: schedulerSchema },
      concurrentWrites: true,
      expireLease: async (dataSource, store, jobId) => {
        const { jobs } = (store as PostgresJobStore).naming;
        await dataSource.query(`UPDATE ${jobs} SET leased_until = now() - interval '1 second' WHERE id = $1`, [jobId]);
      },
      lapseLeaseNow: async (dataSource, store, jobId) => {
        const { jobs } = (store as PostgresJobStore).naming;
        await dataSource.query(`UPDATE ${jobs} SET leased_until = clock_timestamp() WHERE id = $1`, [jobId]);
      },
      cleanup: async () => {
        await dropSchemas(admin, [appSchema, schedulerSchema]);
        await admin.destroy();
      },
    };
  });
});
