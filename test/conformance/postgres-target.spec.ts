import { describe, expect, it } from '@jest/globals';
import type { PostgresJobStore } from '../../lib/store/index.js';
import { openPostgresDataSource } from '../support/postgres.js';
import { postgresTarget } from '../support/targets/postgres.target.js';

describe('issue 35 item 6: the PostgreSQL conformance target cleans up after each case', () => {
  it('issue 35 item 6: cleanup closes the stores opened since the last one and empties their schemas for later cases; teardown drops them', async () => {
    const admin = await openPostgresDataSource(1);
    const target = await postgresTarget();
    let tornDown = false;
    try {
      const opened = [await target.open(), await target.open()];
      await opened[0]!.store.jobHeartbeat({ workerId: 'w', leases: [], leaseMs: 30_000 });
      await opened[0]!.store.jobEnqueue({ job: { name: 'left.behind', payload: {} } });
      const fresh = await opened[1]!.snapshot();
      const schemas = opened.map((o) => (o.store as PostgresJobStore).naming.schema);
      const present = async () => (await admin.query(`SELECT count(*)::int AS n FROM pg_namespace WHERE nspname = ANY($1)`, [schemas]))[0].n;
      expect(await present()).toBe(2);
      await target.cleanup!();
      // Closed: a closed store's heartbeat connection refuses further calls.
      await expect(opened[0]!.store.jobHeartbeat({ workerId: 'w', leases: [{ jobId: '00000000-0000-4000-8000-000000000000', attempt: 1 }], leaseMs: 30_000 })).rejects.toThrow('The store is closed.');
      // The next cases get those schemas back, as empty as a fresh migrate left them.
      const again = [await target.open(), await target.open()];
      expect(again.map((o) => (o.store as PostgresJobStore).naming.schema).sort()).toEqual([...schemas].sort());
      for (const o of again) {
        expect(await o.countJobs()).toBe(0);
        expect(await o.snapshot()).toEqual(fresh);
      }
      // A case with another history policy gets a schema of its own: the install depends on it.
      const off = await target.open({ historyPolicy: 'off' });
      expect(schemas).not.toContain((off.store as PostgresJobStore).naming.schema);
      await target.teardown();
      tornDown = true;
      expect(await present()).toBe(0);
    } finally {
      if (!tornDown) await target.teardown();
      await admin.destroy();
    }
  });

  it('drops, rather than reuses, a schema whose catalog a case changed', async () => {
    const admin = await openPostgresDataSource(1);
    const target = await postgresTarget();
    try {
      const { store } = await target.open();
      const { schema } = (store as PostgresJobStore).naming;
      await admin.query(`ALTER TABLE "${schema}".jobs ADD COLUMN stray integer`);
      await target.cleanup!();
      expect((await admin.query(`SELECT count(*)::int AS n FROM pg_namespace WHERE nspname = $1`, [schema]))[0].n).toBe(0);
      expect(((await target.open()).store as PostgresJobStore).naming.schema).not.toBe(schema);
    } finally {
      await target.teardown();
      await admin.destroy();
    }
  });
});
