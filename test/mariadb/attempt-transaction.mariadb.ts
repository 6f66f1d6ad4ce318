import { describe } from '@jest/globals';
import type { MysqlJobStore } from '../../lib/index.js';
import { attemptTransactionCases } from '../nest/attempt-transaction.cases.js';
import { dropInstallation, mariadbUrl, openMariadbDataSource, uniquePrefix } from '../support/mariadb.js';

/**
 * The attempt-transaction cases of the other SQL stores, on the MySQL store: the handler's writes
 * commit with the fenced success, and roll back on a failure, a lost or lapsed lease, or a snooze.
 * The app's table carries a prefix of its own (TypeORM's entityPrefix), as the scheduler's do.
 */
describe('attempt transactions on MariaDB', () => {
  attemptTransactionCases(async () => {
    const appPrefix = uniquePrefix('app');
    const tablePrefix = uniquePrefix('sched');
    const admin = await openMariadbDataSource({ poolSize: 2 });
    return {
      typeorm: async () => ({ type: 'mariadb', url: mariadbUrl(), entityPrefix: appPrefix, poolSize: 8 }),
      scheduler: { tablePrefix },
      concurrentWrites: true,
      expireLease: async (dataSource, store, jobId) => {
        const { jobs } = (store as MysqlJobStore).naming;
        await dataSource.query(`UPDATE ${jobs} SET leased_until = UTC_TIMESTAMP(3) - INTERVAL 1 SECOND WHERE id = ?`, [jobId]);
      },
      lapseLeaseNow: async (dataSource, store, jobId) => {
        const { jobs } = (store as MysqlJobStore).naming;
        await dataSource.query(`UPDATE ${jobs} SET leased_until = UTC_TIMESTAMP(3) WHERE id = ?`, [jobId]);
      },
      cleanup: async () => {
        await dropInstallation(admin, { prefix: appPrefix });
        await dropInstallation(admin, { prefix: tablePrefix });
        await admin.destroy();
      },
    };
  });
});
