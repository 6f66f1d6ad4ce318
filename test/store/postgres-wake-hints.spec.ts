import { describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { databaseUrl } from '../support/postgres.js';
import { dataSource, freshStore, useAdapterDataSource } from '../support/postgres-adapter.js';

useAdapterDataSource();

/** A LISTEN connection that hands out notifications in arrival order, without sleeping. */
async function listen(channel: string) {
  const client = new pg.Client({ connectionString: databaseUrl() });
  await client.connect();
  const queue: string[] = [];
  const waiting: Array<(payload: string) => void> = [];
  client.on('notification', (message) => {
    const payload = message.payload ?? '';
    const next = waiting.shift();
    if (next) next(payload);
    else queue.push(payload);
  });
  await client.query(`LISTEN "${channel}"`);
  return {
    next: () => (queue.length > 0 ? Promise.resolve(queue.shift()!) : new Promise<string>((resolve) => waiting.push(resolve))),
    close: () => client.end(),
  };
}

describe('PostgreSQL wake-up hints', () => {
  it('notifies the queue when a due job is written, not for future jobs, and only when the transaction commits', async () => {
    const store = freshStore();
    await store.migrate();
    const listener = await listen(store.naming.channel);
    try {
      await store.jobEnqueue({ job: { name: 'later', payload: 1, queue: 'future', delayMs: 60_000 } });
      await store.jobEnqueue({ job: { name: 'now', payload: 1, queue: 'first' } });
      expect(await listener.next()).toBe('first');

      await dataSource
        .transaction(async (manager) => {
          await store.jobEnqueue({ job: { name: 'tx', payload: 1, queue: 'rolled-back' }, manager });
          throw new Error('roll back');
        })
        .catch(() => undefined);
      await dataSource.transaction(async (manager) => {
        await store.jobEnqueueMany({
          jobs: [
            { name: 'tx', payload: 1, queue: 'committed' },
            { name: 'tx', payload: 2, queue: 'committed' },
          ],
          manager,
        });
      });
      expect(await listener.next()).toBe('committed');

      // A relinquished job is due again at once, so it wakes workers too.
      await store.jobEnqueue({ job: { name: 'r', payload: 1, queue: 'relinquish' } });
      expect(await listener.next()).toBe('relinquish');
      const [job] = await store.jobClaim({ workerId: 'w', limit: 1, queues: ['relinquish'], leaseMs: 30_000 });
      await store.jobRelinquishMany({ workerId: 'w', leases: [{ jobId: job!.id, attempt: 1 }] });
      expect(await listener.next()).toBe('relinquish');
    } finally {
      await listener.close();
    }
  });

  it('polling alone, hints this process after an outcome that ends a job dependants wait on, through every outcome path, and after no other', async () => {
    // A transaction pooler's setting without listenUrl: no connection LISTENs, so no NOTIFY is heard.
    const store = freshStore({ poolMode: 'transaction' });
    await store.migrate();
    expect(store.capabilities.wakeHints).toBe('process');
    const hints: string[] = [];
    const subscription = await store.subscribeWakeHints({ listener: (queue) => void hints.push(queue) });
    const claim = async () => (await store.jobClaim({ workerId: 'w', limit: 1, queues: ['parents'], leaseMs: 30_000 }))[0]!;
    const hinted = async (work: () => Promise<unknown>) => {
      hints.length = 0;
      await work();
      return hints.length;
    };
    try {
      const parents = await store.jobEnqueueMany({ jobs: Array.from({ length: 4 }, (_, i) => ({ name: 'parent', payload: i, queue: 'parents' })) });
      const leaf = await store.jobEnqueue({ job: { name: 'leaf', payload: 0, queue: 'parents' } });
      await store.jobEnqueueMany({ jobs: parents.map((parent, i) => ({ name: 'child', payload: i, queue: 'children', dependsOn: [parent.id] })) });

      const [a, b, c, d] = [await claim(), await claim(), await claim(), await claim()];
      const e = await claim();
      expect(e.id).toBe(leaf.id);
      // An outcome that ends a job nothing waits on sends no hint; one that retries sends none either.
      expect(await hinted(() => store.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId: e.id, attempt: 1, kind: 'succeeded' }] }))).toBe(0);
      expect(await hinted(() => store.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId: a.id, attempt: 1, kind: 'failed', error: 'again', retryDelayMs: 60_000 }] }))).toBe(0);
      // Each outcome path, ending a parent: one hint.
      expect(await hinted(() => store.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId: b.id, attempt: 1, kind: 'succeeded' }] }))).toBe(1);
      expect(await hinted(() => store.jobCompleteAndClaim!({ workerId: 'w', outcomes: [{ jobId: c.id, attempt: 1, kind: 'succeeded' }], claim: { limit: 1, queues: ['nothing'], leaseMs: 30_000 } }))).toBe(1);
      const tx = store.beginAttempt();
      await tx.run(() => tx.manager.query('SELECT 1'));
      expect(await hinted(() => tx.commitSuccess('w', d.id, 1, null))).toBe(1);
      // A relinquished job is due again at once.
      const [child] = await store.jobClaim({ workerId: 'w', limit: 1, queues: ['children'], leaseMs: 30_000 });
      expect(await hinted(() => store.jobRelinquishMany({ workerId: 'w', leases: [{ jobId: child!.id, attempt: 1 }] }))).toBe(1);
    } finally {
      await subscription.close();
    }
  });
});
