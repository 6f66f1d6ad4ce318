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
      copyJob: async (jobId, newId, inMs) => {
        const [, table] = jobs.replace(/`/g, '').split('.');
        const columns = ((await dataSource.query(
          `SELECT column_name AS name FROM information_schema.columns WHERE table_schema = DATABASE() AND table_name = ? AND extra NOT LIKE '%GENERATED%' AND extra NOT LIKE '%auto_increment%' ORDER BY ordinal_position`,
          [table ?? jobs.replace(/`/g, '')],
        )) as { name: string }[]).map((c) => c.name);
        const picked = columns.map((c) => (c === 'id' ? '?' : `\`${c}\``)).join(', ');
        await dataSource.query(`INSERT INTO ${jobs} (${columns.map((c) => `\`${c}\``).join(', ')}) SELECT ${picked} FROM ${jobs} WHERE id = ?`, [newId, jobId]);
        // MySQL's store writes the history itself: the copy's creation entry, as its insert would.
        await dataSource.query(`INSERT INTO ${history} (job_id, name, at, state, attempt) SELECT id, name, UTC_TIMESTAMP(3) + INTERVAL ? MICROSECOND, state, attempt FROM ${jobs} WHERE id = ?`, [
          inMs * 1_000,
          newId,
        ]);
      },
      backdateAudit: async (ms) => {
        await dataSource.query(`UPDATE ${store.naming.audit} SET at = at - INTERVAL ? MICROSECOND`, [ms * 1_000]);
      },
      close: async () => store.close(),
    };
  });
});
