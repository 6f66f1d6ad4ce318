import { describe } from '@jest/globals';
import { PostgresJobStore } from '../../lib/store/index.js';
import { dataSource, schemas, useAdapterDataSource } from '../support/postgres-adapter.js';
import { uniqueSchema } from '../support/postgres.js';
import { verifyCases } from './verify.cases.js';

useAdapterDataSource();

describe('verifyHistory on the PostgreSQL store', () => {
  verifyCases(async () => {
    const schema = uniqueSchema('pgverify');
    schemas.push(schema);
    const store = new PostgresJobStore({ dataSource, schema });
    await store.migrate();
    const { jobs, history } = store.naming;
    return {
      store,
      // The sabotage is plain SQL, as a broken store or a hand edit would leave it.
      writeEntry: async (jobId, state, attempt, lease, inMs = 0) => {
        await dataSource.query(
          `INSERT INTO ${history} (job_id, name, at, state, attempt, worker_id, lease_until) SELECT id, name, clock_timestamp() + $6 * interval '1 millisecond', $2, $3, $4, $5 FROM ${jobs} WHERE id = $1`,
          [jobId, state, attempt, lease?.workerId ?? null, lease?.leaseUntil ?? null, inMs],
        );
      },
      now: () => Date.now(),
      deleteRow: async (jobId) => {
        await dataSource.query(`DELETE FROM ${jobs} WHERE id = $1`, [jobId]);
      },
      trimOldest: async (jobId, count) => {
        await dataSource.query(`DELETE FROM ${history} WHERE id IN (SELECT id FROM ${history} WHERE job_id = $1 ORDER BY id LIMIT $2)`, [jobId, count]);
      },
      copyJob: async (jobId, newId, inMs) => {
        const columns = ((await dataSource.query(
          `SELECT column_name AS name FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'jobs' AND is_identity = 'NO' AND is_generated = 'NEVER' ORDER BY ordinal_position`,
          [schema],
        )) as { name: string }[]).map((c) => c.name);
        const picked = columns.map((c) => (c === 'id' ? '$2::uuid' : c)).join(', ');
        await dataSource.query(`INSERT INTO ${jobs} (${columns.join(', ')}) SELECT ${picked} FROM ${jobs} WHERE id = $1`, [jobId, newId]);
        await dataSource.query(`UPDATE ${history} SET at = at + $2 * interval '1 millisecond' WHERE job_id = $1`, [newId, inMs]);
      },
      backdateAudit: async (ms) => {
        await dataSource.query(`UPDATE ${store.naming.audit} SET at = at - $1 * interval '1 millisecond'`, [ms]);
      },
      close: async () => store.close(),
    };
  });
});
