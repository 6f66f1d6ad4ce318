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
});
