import { expect, it } from '@jest/globals';
import { retryCeilingMs, retryDelayMs, SeededRandom, type RetryPolicy } from '../../../core/index.js';
import type { SuiteContext } from '../harness.js';
import { claimNone, claimOne, enqueue, mustGet } from './helpers.js';

export function retryCases(ctx: SuiteContext): void {
  it('follows the retry policy drawn from a seeded random source, then dead-letters on the last attempt', async () => {
    const h = await ctx.open();
    const policy: RetryPolicy = { baseDelayMs: 1_000, maxDelayMs: 20_000, jitter: true };
    const random = new SeededRandom(20261129n);
    const expected = new SeededRandom(20261129n);
    const id = await enqueue(h.store, { maxAttempts: 6 });
    const seen: number[] = [];

    for (let attempt = 1; attempt <= 5; attempt++) {
      const job = await claimOne(h.store, 'worker');
      expect(job.attempt).toBe(attempt);
      const delay = retryDelayMs(attempt, policy, random);
      await h.store.jobCompleteMany({ workerId: 'worker', outcomes: [{ jobId: id, attempt, kind: 'failed', error: `fail ${attempt}`, retryDelayMs: delay }] });
      const stored = await mustGet(h.store, id);
      expect(stored).toMatchObject({ state: 'scheduled', attempt, lastError: `fail ${attempt}` });
      seen.push(stored.runAt.getTime() - stored.updatedAt.getTime());
      await h.advance(delay);
    }

    const replayed = [1, 2, 3, 4, 5].map((attempt) => retryDelayMs(attempt, policy, expected));
    expect(seen).toEqual(replayed);
    seen.forEach((delay, i) => {
      expect(delay).toBeGreaterThanOrEqual(0);
      expect(delay).toBeLessThanOrEqual(retryCeilingMs(i + 1, policy));
    });

    await claimOne(h.store, 'worker');
    await h.store.jobCompleteMany({ workerId: 'worker', outcomes: [{ jobId: id, attempt: 6, kind: 'failed', error: 'fail 6', retryDelayMs: 1 }] });
    expect(await mustGet(h.store, id)).toMatchObject({ state: 'dead_lettered', attempt: 6, lastError: 'fail 6' });
  });

  it('keeps a failed job out of claims until its retry time', async () => {
    const h = await ctx.open();
    const id = await enqueue(h.store, { maxAttempts: 2 });
    await claimOne(h.store, 'worker');
    await h.store.jobCompleteMany({ workerId: 'worker', outcomes: [{ jobId: id, attempt: 1, kind: 'failed', error: 'x', retryDelayMs: 60_000 }] });
    await claimNone(h.store);
    await h.advance(50_000);
    await claimNone(h.store);
    await h.advance(10_000);
    expect(await claimOne(h.store)).toMatchObject({ id, attempt: 2 });
  });
}
