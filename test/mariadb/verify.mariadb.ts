import { afterAll, beforeAll, describe } from '@jest/globals';
import type { DataSource } from 'typeorm';
import { MysqlJobStore } from '../../lib/store/index.js';
import { dropInstallation, openMariadbDataSource, uniquePrefix } from '../support/mariadb.js';
import { verifyCases } from '../verify/verify.cases.js';

describe('verifyHistory on the MySQL store (MariaDB)', () => {
  let dataSource: DataSource;
  const made: MysqlJobStore[] = [];

  beforeAll(async () => {
    dataSource = await openMariadbDataSource();
  });
  afterAll(async () => {
    for (const store of made) await dropInstallation(dataSource, store.naming);
    await dataSource.destroy();
  });

  verifyCases(async () => {
    const store = new MysqlJobStore({ dataSource, tablePrefix: uniquePrefix('verify'), poolSize: 2 });
    made.push(store);
    await store.migrate();
    const { jobs, history } = store.naming;
    return {
      store,
      // The sabotage is plain SQL, as a broken store or a hand edit would leave it.
      writeEntry: async (jobId, state, attempt, lease, inMs = 0) => {
        await dataSource.query(`INSERT INTO ${history} (job_id, name, at, state, attempt, worker_id, lease_until) SELECT id, name, UTC_TIMESTAMP(3) + INTERVAL ? MICROSECOND, ?, ?, ?, ? FROM ${jobs} WHERE id = ?`, [
          inMs * 1_000,
          state,
          attempt,
          lease?.workerId ?? null,
          lease ? lease.leaseUntil.toISOString().slice(0, 23).replace('T', ' ') : null,
          jobId,
        ]);
      },
      now: () => Date.now(),
      deleteRow: async (jobId) => {
        await dataSource.query(`DELETE FROM ${jobs} WHERE id = ?`, [jobId]);
      },
      trimOldest: async (jobId, count) => {
        await dataSource.query(`DELETE FROM ${history} WHERE job_id = ? ORDER BY id LIMIT ?`, [jobId, count]);
      },
      backdateAudit: async (ms) => {
        await dataSource.query(`UPDATE ${store.naming.audit} SET at = at - INTERVAL ? MICROSECOND`, [ms * 1_000]);
      },
      close: async () => store.close(),
    };
  });
});
