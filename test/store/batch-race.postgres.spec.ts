import { describe, expect, it } from '@jest/globals';
import { ALL_PARENTS_SUCCEEDED } from '../../lib/core/index.js';
import { tracked, untilWaiting } from '../support/lock-waits.js';
import { raceStores } from '../support/race-stores.js';

const LEASE_MS = 60_000;

/**
 * An on_failure dependant (a batch's onFailure callback) whose two parents end in two outcome writes
 * at the same moment: the second settler waits for the first at the dependant's row, and decides
 * from the row the first wrote (its latch and whether a parent failed), never from its own snapshot.
 * Each interleaving is forced: the first write is held open, the second seen waiting on it.
 */
describe('batches: the last two parents of an on_failure dependant end at the same moment on PostgreSQL', () => {
  const race = raceStores('batchrace');
  const openStore = () => race.open();

  it.each([
    ['dead_lettered', 'succeeded', 'scheduled'],
    ['succeeded', 'dead_lettered', 'scheduled'],
    ['succeeded', 'succeeded', 'cancelled'],
  ] as const)('first parent %s, second %s while the first is uncommitted: the dependant ends %s', async (first, second, expected) => {
    const store = await openStore();
    const { batchId, jobs, callbacks } = await store.jobEnqueueBatch({ jobs: [{ name: 'a', payload: 1 }, { name: 'b', payload: 2 }], onFailure: { name: 'failed', payload: {} } });
    const claimed = await store.jobClaim({ workerId: 'w', limit: 2, queues: ['default'], leaseMs: LEASE_MS });
    expect(claimed).toHaveLength(2);
    const [one, two] = [jobs[0]!.id, jobs[1]!.id];
    const holder = race.dataSource.createQueryRunner();
    await holder.connect();
    await holder.startTransaction();
    try {
      // The first parent's end, written and not yet committed: its settling lowered the latch (and
      // held the dependant, which shares its edges with the other parent).
      await holder.query(`SELECT 1 FROM ${store.naming.jobs} WHERE id = $1 FOR UPDATE`, [one]);
      await holder.query(`UPDATE ${store.naming.jobs} SET state = $2, leased_until = NULL, finished_at = now(), last_error = $3 WHERE id = $1`, [
        one,
        first,
        first === 'succeeded' ? null : 'broken',
      ]);
      const outcome = second === 'succeeded' ? { kind: 'succeeded' as const } : { kind: 'dead_lettered' as const, error: 'broken' };
      const write = tracked(store.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId: two, attempt: 1, ...outcome }] }));
      expect(await untilWaiting(race.admin, 'WITH ending AS', write.isDone)).toBe(true);
      await holder.commitTransaction();
      expect(await write.promise).toMatchObject([{ status: 'applied', state: second }]);
    } finally {
      if (holder.isTransactionActive) await holder.rollbackTransaction();
      await holder.release();
    }
    const callback = await store.jobGet({ jobId: callbacks.onFailure! });
    expect(callback).toMatchObject({ state: expected, pendingParents: 0, lastError: expected === 'cancelled' ? ALL_PARENTS_SUCCEEDED : null });
    expect(callback!.finishedAt === null).toBe(expected === 'scheduled');
    expect(await store.jobBatch({ batchId })).toMatchObject({ pending: 0, ended: true, callbacks: [{ kind: 'failure', state: expected }] });
  });

  it('a dependant of an on_failure job, enqueued while its last parent\'s success cancels it: the enqueue waits for that write and starts the dependant cancelled', async () => {
    const store = await openStore();
    const { id: parent } = await store.jobEnqueue({ job: { name: 'parent', payload: {} } });
    const { id: cleanup } = await store.jobEnqueue({ job: { name: 'cleanup', payload: {}, dependsOn: [parent], dependencyMode: 'on_failure' } });
    await store.jobClaim({ workerId: 'w', limit: 1, queues: ['default'], leaseMs: LEASE_MS });
    const holder = race.dataSource.createQueryRunner();
    await holder.connect();
    await holder.startTransaction();
    try {
      // The parent's success, uncommitted: its settling cancelled the on_failure job, the only
      // dependant of its one open edge, and so locked it as every write that ends a job does.
      await holder.query(`SELECT 1 FROM ${store.naming.jobs} WHERE id = $1 FOR UPDATE`, [parent]);
      await holder.query(`UPDATE ${store.naming.jobs} SET state = 'succeeded', leased_until = NULL, finished_at = now() WHERE id = $1`, [parent]);
      const enqueue = tracked(store.jobEnqueue({ job: { name: 'after', payload: {}, dependsOn: [cleanup] } }));
      expect(await untilWaiting(race.admin, 'FOR KEY SHARE', enqueue.isDone)).toBe(true);
      await holder.commitTransaction();
      const { id } = await enqueue.promise;
      expect(await store.jobGet({ jobId: cleanup })).toMatchObject({ state: 'cancelled', lastError: ALL_PARENTS_SUCCEEDED });
      expect(await store.jobGet({ jobId: id })).toMatchObject({ state: 'cancelled', lastError: `parent ${cleanup} ended cancelled` });
    } finally {
      if (holder.isTransactionActive) await holder.rollbackTransaction();
      await holder.release();
    }
  });
});
