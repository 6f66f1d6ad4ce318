import { describe, expect, it } from '@jest/globals';
import { dataSource, freshStore, useAdapterDataSource } from '../support/postgres-adapter.js';

useAdapterDataSource();

describe('PostgreSQL history delivery order', () => {
  it('holds back entries behind a transaction still open, then hands both out in commit-safe order', async () => {
    const store = freshStore();
    await store.migrate();
    const runner = dataSource.createQueryRunner();
    await runner.connect();
    await runner.startTransaction();
    try {
      // The open transaction takes its history id first; the later one commits first.
      const { id: slow } = await store.jobEnqueue({ job: { name: 'slow.tx', payload: 1 }, manager: runner.manager });
      const { id: fast } = await store.jobEnqueue({ job: { name: 'fast.tx', payload: 2 } });
      expect(await store.historyRead({ limit: 10 })).toEqual([]);
      await runner.commitTransaction();
      const entries = await store.historyRead({ limit: 10 });
      expect(entries.map((e) => e.jobId)).toEqual([slow, fast]);
      // A reader that had stopped at the fast entry would have skipped the slow one for good.
      expect(await store.historyRead({ after: entries[0]!.position, limit: 10 })).toEqual([entries[1]]);
    } finally {
      if (runner.isTransactionActive) await runner.rollbackTransaction();
      await runner.release();
    }
  });
});
