import { describe, expect, it } from '@jest/globals';
import type { QueryRunner } from 'typeorm';
import { PostgresJobStore } from '../../lib/store/index.js';
import { dataSource, freshStore, useAdapterDataSource } from '../support/postgres-adapter.js';

useAdapterDataSource();

describe('PostgreSQL asynchronous claim commits', () => {
  const setting = async (runner: QueryRunner) => ((await runner.query('SHOW synchronous_commit')) as { synchronous_commit: string }[])[0]!.synchronous_commit;

  it.each([
    [true, 'no limit'],
    [false, 'no limit'],
    [true, 'a queue limit'],
    [false, 'a queue limit'],
  ])('with asyncClaimCommit %s and %s, a claim turns synchronous_commit off for its own transaction only when asked', async (asyncClaimCommit, limit) => {
    const texts: string[] = [];
    const store = freshStore({ asyncClaimCommit, onStatement: (text) => texts.push(text) });
    await store.migrate();
    if (limit === 'a queue limit') await store.concurrencyLimitSet({ target: { queue: 'default' }, max: 5 });
    await store.jobEnqueueMany({ jobs: [1, 2].map((n) => ({ name: 'async.claim', payload: n })) });
    expect(await store.jobClaim({ workerId: 'w1', limit: 1, queues: ['default'], leaseMs: 30_000 })).toHaveLength(1);
    // The statement that claimed (the full one once a limit exists), inside a transaction of our
    // own: the setting changes for that transaction and is gone after it.
    const claim = texts.filter((text) => text.includes('WITH paused AS')).at(-1)!;
    expect(claim.includes('wanted AS')).toBe(limit === 'a queue limit');
    const runner = dataSource.createQueryRunner();
    await runner.connect();
    try {
      expect(await setting(runner)).toBe('on');
      await runner.startTransaction();
      // The limited claim reads a window ($5) as wide as the batch in its first round, and takes its turn from no lane or group ($6 to $8).
      const values = claim.includes('$5') ? ['w2', 1, 30_000, true, 1, null, null, null] : ['w2', 1, 30_000, true];
      expect((await runner.query(claim, values, true)).records).toHaveLength(1);
      expect(await setting(runner)).toBe(asyncClaimCommit ? 'off' : 'on');
      await runner.commitTransaction();
      expect(await setting(runner)).toBe('on');
    } finally {
      await runner.release();
    }
    expect((await store.jobList({ state: 'running' })).map((j) => j.workerId).sort()).toEqual(['w1', 'w2']);
  });

  it('refuses an asyncClaimCommit that is not a boolean, before any SQL runs', () => {
    expect(() => new PostgresJobStore({ dataSource, asyncClaimCommit: 'yes' as never })).toThrow(/^asyncClaimCommit must be true or false, got "yes"\.$/);
  });
});
