import { describe, expect, it } from '@jest/globals';
import type { PostgresJobStore } from '../../lib/store/index.js';
import { openPostgresDataSource } from '../support/postgres.js';
import { postgresTarget } from '../support/targets/postgres.target.js';

describe('issue 35 item 6: the PostgreSQL conformance target cleans up after each case', () => {
  it('issue 35 item 6: cleanup closes the stores opened since the last one and drops their schemas, so teardown has none left to drop', async () => {
    const admin = await openPostgresDataSource(1);
    const target = await postgresTarget();
    try {
      const opened = [await target.open(), await target.open()];
      await opened[0]!.store.jobHeartbeat({ workerId: 'w', leases: [], leaseMs: 30_000 });
      const schemas = opened.map((o) => (o.store as PostgresJobStore).naming.schema);
      const present = async () => (await admin.query(`SELECT count(*)::int AS n FROM pg_namespace WHERE nspname = ANY($1)`, [schemas]))[0].n;
      expect(await present()).toBe(2);
      await target.cleanup!();
      expect(await present()).toBe(0);
      // Closed: a closed store's heartbeat connection refuses further calls.
      await expect(opened[0]!.store.jobHeartbeat({ workerId: 'w', leases: [{ jobId: '00000000-0000-4000-8000-000000000000', attempt: 1 }], leaseMs: 30_000 })).rejects.toThrow('The store is closed.');
    } finally {
      await target.teardown();
      await admin.destroy();
    }
  });
});
