import { expect, it } from '@jest/globals';
import { InvalidArgumentError } from '../../../core/index.js';
import type { SuiteContext } from '../harness.js';
import { claimOne, enqueue, expectRefused, LEASE_MS, mustGet } from './helpers.js';

/**
 * jobCompleteAndClaim (issue 36 item 2): a worker's outcomes and its next claim in one call. On
 * every store it means what the two calls mean, in that order: the outcomes under the fence, then
 * the claim, which sees the slots they freed.
 */
export function completeAndClaimCases(ctx: SuiteContext): void {
  const claim = (limit: number, queues = ['default']) => ({ limit, queues, leaseMs: LEASE_MS, includeLapsed: true });

  it('issue 36 item 2: writes the outcomes under the fence and leases the next jobs, in one call', async () => {
    const h = await ctx.open();
    const first = await enqueue(h.store, { payload: 1 });
    const next = [await enqueue(h.store, { payload: 2 }), await enqueue(h.store, { payload: 3 })];
    const job = await claimOne(h.store, 'worker-a');
    expect(job.id).toBe(first);
    const both = await h.store.jobCompleteAndClaim!({
      workerId: 'worker-a',
      outcomes: [{ jobId: first, attempt: 1, kind: 'succeeded', output: { ok: true } }],
      claim: claim(5),
    });
    expect(both.results).toEqual([{ jobId: first, attempt: 1, status: 'applied', state: 'succeeded' }]);
    expect(both.claimError).toBeUndefined();
    expect(both.jobs.map((j) => j.id)).toEqual(next);
    expect(both.jobs.every((j) => j.state === 'running' && j.workerId === 'worker-a' && j.attempt === 1)).toBe(true);
    expect(await mustGet(h.store, first)).toMatchObject({ state: 'succeeded', output: { ok: true } });
  });

  it('issue 36 item 2: a stale report changes nothing, and the claim goes ahead', async () => {
    const h = await ctx.open();
    const id = await enqueue(h.store, { payload: 1 });
    await claimOne(h.store, 'worker-a');
    const other = await enqueue(h.store, { payload: 2 });
    const before = await mustGet(h.store, id);
    const both = await h.store.jobCompleteAndClaim!({ workerId: 'worker-b', outcomes: [{ jobId: id, attempt: 1, kind: 'succeeded' }], claim: claim(5) });
    expect(both.results).toEqual([{ jobId: id, attempt: 1, status: 'stale' }]);
    expect(both.jobs.map((j) => j.id)).toEqual([other]);
    expect(await mustGet(h.store, id)).toEqual(before);
  });

  it('issue 36 item 2: the claim counts the slot its own outcomes freed under a concurrency limit', async () => {
    const h = await ctx.open();
    await h.store.concurrencyLimitSet({ target: { key: 'tenant' }, max: 1 });
    const a = await enqueue(h.store, { concurrencyKey: 'tenant', payload: 1 });
    const b = await enqueue(h.store, { concurrencyKey: 'tenant', payload: 2 });
    expect((await claimOne(h.store, 'worker-a')).id).toBe(a);
    // Alone, a claim finds the key full.
    expect(await h.store.jobClaim({ workerId: 'worker-a', ...claim(5) })).toEqual([]);
    const both = await h.store.jobCompleteAndClaim!({ workerId: 'worker-a', outcomes: [{ jobId: a, attempt: 1, kind: 'succeeded' }], claim: claim(5) });
    expect(both.results).toEqual([{ jobId: a, attempt: 1, status: 'applied', state: 'succeeded' }]);
    expect(both.jobs.map((j) => j.id)).toEqual([b]);
  });

  it('issue 36 item 2: a failure rescheduled to run at once is due for the next claim, not taken twice', async () => {
    const h = await ctx.open();
    const id = await enqueue(h.store, { maxAttempts: 3 });
    await claimOne(h.store, 'worker-a');
    const both = await h.store.jobCompleteAndClaim!({
      workerId: 'worker-a',
      outcomes: [{ jobId: id, attempt: 1, kind: 'failed', error: 'boom', retryDelayMs: 0 }],
      claim: claim(5),
    });
    expect(both.results).toEqual([{ jobId: id, attempt: 1, status: 'applied', state: 'scheduled' }]);
    // Taken by this very call or by the next claim, but once, as attempt 2.
    const again = both.jobs.length > 0 ? both.jobs : await h.store.jobClaim({ workerId: 'worker-a', ...claim(5) });
    expect(again.map((j) => [j.id, j.attempt])).toEqual([[id, 2]]);
  });

  it('issue 36 items 2 and 4: under the lean finish a success written with a claim is deleted as one written alone', async () => {
    const h = await ctx.open({ finish: 'lean' });
    const gone = await enqueue(h.store, { payload: 1 });
    const kept = await enqueue(h.store, { payload: 2 });
    const next = await enqueue(h.store, { payload: 3 });
    const [a, b] = await h.store.jobClaim({ workerId: 'worker-a', ...claim(2) });
    expect([a!.id, b!.id]).toEqual([gone, kept]);
    const both = await h.store.jobCompleteAndClaim!({
      workerId: 'worker-a',
      outcomes: [
        { jobId: gone, attempt: 1, kind: 'succeeded' },
        { jobId: kept, attempt: 1, kind: 'succeeded', output: { receipt: 7 } },
      ],
      claim: claim(5),
    });
    expect(both.results.map((r) => r.status)).toEqual(['applied', 'applied']);
    expect(both.jobs.map((j) => j.id)).toEqual([next]);
    expect(await h.store.jobGet({ jobId: gone })).toBeNull();
    expect(await h.store.jobHistory({ jobId: gone })).toEqual([]);
    expect(await mustGet(h.store, kept)).toMatchObject({ state: 'succeeded', output: { receipt: 7 } });
  });

  it('issue 36 item 2: refuses bad input before anything is written', async () => {
    const h = await ctx.open();
    const id = await enqueue(h.store);
    await claimOne(h.store, 'worker-a');
    await enqueue(h.store, { payload: 2 });
    const before = await h.snapshot();
    const outcomes = [{ jobId: id, attempt: 1, kind: 'succeeded' as const }];
    await expectRefused(() => h.store.jobCompleteAndClaim!({ workerId: 'worker-a', outcomes, claim: { ...claim(0) } }), /limit/, InvalidArgumentError);
    await expectRefused(() => h.store.jobCompleteAndClaim!({ workerId: 'worker-a', outcomes, claim: { ...claim(5), queues: [] } }), /queues/, InvalidArgumentError);
    await expectRefused(
      () => h.store.jobCompleteAndClaim!({ workerId: 'worker-a', outcomes: [{ jobId: 'nope', attempt: 1, kind: 'succeeded' }], claim: claim(5) }),
      /jobId/,
      InvalidArgumentError,
    );
    await expectRefused(
      () => h.store.jobCompleteAndClaim!({ workerId: 'worker-a', outcomes, claim: { ...claim(5), limt: 5 } as never }),
      /limt is not a known/,
      InvalidArgumentError,
    );
    expect(await h.snapshot()).toEqual(before);
  });
}
