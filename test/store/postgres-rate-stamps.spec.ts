import { describe, expect, it } from '@jest/globals';
import { limitsLockId } from '../../lib/store/postgres/postgres-limits.js';
import { tracked, untilWaiting } from '../support/lock-waits.js';
import { dataSource, freshStore, useAdapterDataSource } from '../support/postgres-adapter.js';

useAdapterDataSource();

// A limited claim's transaction begins with the statement that waits for the limits lock, which an
// operator's limit change holds exclusively for as long as its transaction runs. A start stamped
// with the transaction's time would date from before that wait: a later claim would then find the
// start free a window after an instant earlier than the claim really took it, and two starts could
// land closer together than the window.
describe('rate-limit starts on PostgreSQL', () => {
  it("issue 35 item 5: a claim that waited behind a limit change stamps its start, and its log entry, with its own statement's time", async () => {
    const store = freshStore();
    await store.migrate();
    await store.rateLimitSet({ target: { key: 'api' }, rate: { max: 1, perMs: 60_000 } });
    const { id } = await store.jobEnqueue({ job: { name: 'rated', payload: 1, concurrencyKey: 'api' } });
    const { rateStarts, history } = store.naming;
    // A first claim finds the limit, so the store's next claims open with the limited claim's transaction.
    expect(await store.jobClaim({ workerId: 'w', limit: 1, queues: ['other'], leaseMs: 60_000 })).toEqual([]);

    const holder = dataSource.createQueryRunner();
    await holder.connect();
    let released: Date;
    try {
      await holder.startTransaction();
      // What a limit change holds while it rewrites slots (limit-slots.sql.ts).
      await holder.query(`SELECT pg_advisory_xact_lock(${limitsLockId(store.naming)})`);
      const claim = tracked(store.jobClaim({ workerId: 'w', limit: 1, queues: ['default'], leaseMs: 60_000 }));
      expect(await untilWaiting(dataSource, 'limits_pending', claim.isDone)).toBe(true);
      released = ((await holder.query('SELECT clock_timestamp() AS at')) as { at: Date }[])[0]!.at;
      await holder.commitTransaction();
      expect((await claim.promise).map((job) => job.id)).toEqual([id]);
    } finally {
      await holder.release();
    }

    const [stamp] = (await dataSource.query(`SELECT used_at FROM ${rateStarts} WHERE key = 'key:api'`)) as { used_at: Date }[];
    const [entry] = (await dataSource.query(`SELECT at FROM ${history} WHERE job_id = $1 AND state = 'running'`, [id])) as { at: Date }[];
    expect(stamp!.used_at.getTime()).toBeGreaterThanOrEqual(released.getTime());
    // The log reads the clock the start was stamped with, so a checker of the windows sees what the claim counted.
    expect(entry!.at.getTime()).toBe(stamp!.used_at.getTime());
  });
});
