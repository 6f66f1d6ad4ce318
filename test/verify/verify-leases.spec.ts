import { afterEach, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { SqliteJobStore, type JobStore } from '../../lib/store/index.js';
import { ManualClock, MemoryJobStore } from '../../lib/testing/index.js';
import { verifyHistory } from '../../lib/verify/index.js';

const LEASE = 10_000;

/**
 * Every way a lease ends, on a manual clock: a success under a lease a heartbeat renewed (after the
 * first deadline, before the renewed one), a reclaim of a lapsed lease, a stale report the fence
 * refuses, a release, and the sweep's dead letter. The store's own history verifies clean, each
 * end judged. On SQLite the entries come from its triggers, stamped with the store's clock: the
 * database's would put every entry years from the manual clock's leases.
 */
async function everyLeaseEnd(store: JobStore, clock: ManualClock): Promise<void> {
  const claim = async (queue: string, workerId: string) => (await store.jobClaim({ workerId, limit: 1, queues: [queue], leaseMs: LEASE }))[0]!;

  const { id: renewed } = await store.jobEnqueue({ job: { name: 'work', payload: 1, queue: 'renewed' } });
  const first = await claim('renewed', 'a');
  clock.advance(LEASE - 1_000);
  expect((await store.jobHeartbeat({ workerId: 'a', leases: [{ jobId: renewed, attempt: first.attempt }], leaseMs: LEASE })).renewed).toHaveLength(1);
  clock.advance(5_000);
  expect(await store.jobCompleteMany({ workerId: 'a', outcomes: [{ jobId: renewed, attempt: first.attempt, kind: 'succeeded' }] })).toMatchObject([{ status: 'applied' }]);

  const { id: lapsed } = await store.jobEnqueue({ job: { name: 'work', payload: 2, queue: 'lapsed', maxAttempts: 3 } });
  const gone = await claim('lapsed', 'a');
  clock.advance(LEASE);
  const again = await claim('lapsed', 'b');
  expect([again.id, again.attempt]).toEqual([lapsed, 2]);
  expect(await store.jobCompleteMany({ workerId: 'a', outcomes: [{ jobId: lapsed, attempt: gone.attempt, kind: 'succeeded' }] })).toMatchObject([{ status: 'stale' }]);
  expect(await store.jobRelinquishMany({ workerId: 'b', leases: [{ jobId: lapsed, attempt: again.attempt }] })).toMatchObject([{ status: 'applied' }]);

  const { id: swept } = await store.jobEnqueue({ job: { name: 'work', payload: 3, queue: 'swept', maxAttempts: 1 } });
  await claim('swept', 'c');
  clock.advance(LEASE + 1);
  expect(await store.jobExpireLeases({ limit: 10 })).toMatchObject([{ jobId: swept, state: 'dead_lettered' }]);
}

const stores: { name: string; open: (clock: ManualClock) => Promise<{ store: JobStore; close: () => Promise<void> }> }[] = [
  { name: 'memory', open: async (clock) => ({ store: new MemoryJobStore({ clock }), close: async () => {} }) },
  {
    name: 'SQLite',
    open: async (clock) => {
      const dir = mkdtempSync(join(tmpdir(), 'durable-scheduler-leases-'));
      const dataSource = await new DataSource({ type: 'better-sqlite3', database: join(dir, 'leases.db') }).initialize();
      const store = new SqliteJobStore({ dataSource, clock });
      await store.migrate();
      return {
        store,
        close: async () => {
          await store.close();
          await dataSource.destroy();
          rmSync(dir, { recursive: true, force: true });
        },
      };
    },
  },
];

describe('issue 40: every end of a lease, judged on the store\'s own history', () => {
  let close: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await close?.();
    close = undefined;
  });

  it.each(stores)('$name: verifies clean with each end judged, a renewed lease by its renewed deadline', async ({ open }) => {
    const clock = new ManualClock(Date.parse('2031-01-01T00:00:00Z'));
    const opened = await open(clock);
    close = opened.close;
    await everyLeaseEnd(opened.store, clock);
    const report = await verifyHistory(opened.store);
    expect(report.violations).toEqual([]);
    // The renewed success, the reclaim, the release and the sweep's dead letter.
    expect(report.checked).toMatchObject({ leases: 4, leasesUnrecorded: 0, attempts: 4 });
    // The renewed lease's success is judged against the renewed deadline, not the first.
    const renewed = (await opened.store.jobList({ queue: 'renewed' }))[0]!;
    const [, running, succeeded] = await opened.store.jobHistory({ jobId: renewed.id });
    expect(succeeded!.leaseUntil!.getTime() - running!.at.getTime()).toBe(LEASE - 1_000 + LEASE);
    expect(succeeded!.at.getTime() - running!.at.getTime()).toBe(LEASE - 1_000 + 5_000);
  });
});
