import { expect, it } from '@jest/globals';
import type { SuiteContext } from '../harness.js';
import { claimNone, claimOne, enqueue, LEASE_MS, mustGet } from './helpers.js';

export function leaseCases(ctx: SuiteContext): void {
  it('makes a job whose lease lapsed claimable again, charging the lapsed attempt', async () => {
    const h = await ctx.open();
    const id = await enqueue(h.store, { maxAttempts: 3 });
    await claimOne(h.store, 'worker-a');
    await h.advance(LEASE_MS);
    const reclaimed = await claimOne(h.store, 'worker-b');
    expect(reclaimed).toMatchObject({ id, attempt: 2, workerId: 'worker-b', state: 'running', lastError: 'lease expired' });

    // The first worker reports late: fenced off, and the new lease is untouched.
    const before = await h.snapshot();
    expect(await h.store.jobCompleteMany({ workerId: 'worker-a', outcomes: [{ jobId: id, attempt: 1, kind: 'succeeded' }] })).toEqual([
      { jobId: id, attempt: 1, status: 'stale' },
    ]);
    expect(await h.store.jobHeartbeat({ workerId: 'worker-a', leases: [{ jobId: id, attempt: 1 }], leaseMs: LEASE_MS })).toEqual({
      renewed: [],
      lost: [{ jobId: id, attempt: 1 }],
    });
    expect(await h.snapshot()).toEqual(before);
    expect(await h.store.jobCompleteMany({ workerId: 'worker-b', outcomes: [{ jobId: id, attempt: 2, kind: 'succeeded' }] })).toEqual([
      { jobId: id, attempt: 2, status: 'applied', state: 'succeeded' },
    ]);
  });

  it('leaves lapsed leases to a later claim when asked to (includeLapsed: false), still taking due jobs', async () => {
    const h = await ctx.open();
    const lapsed = await enqueue(h.store, { maxAttempts: 3 });
    await claimOne(h.store, 'worker-a');
    await h.advance(LEASE_MS);
    const due = await enqueue(h.store);
    const params = { workerId: 'worker-b', limit: 5, queues: ['default'], leaseMs: LEASE_MS };
    expect((await h.store.jobClaim({ ...params, includeLapsed: false })).map((j) => j.id)).toEqual([due]);
    expect(await mustGet(h.store, lapsed)).toMatchObject({ state: 'running', attempt: 1, workerId: 'worker-a' });
    // The default searches for them.
    expect(await h.store.jobClaim(params)).toEqual([expect.objectContaining({ id: lapsed, attempt: 2, workerId: 'worker-b', lastError: 'lease expired' })]);
  });

  it('renews the leases a worker holds and reports the ones it lost', async () => {
    const h = await ctx.open();
    const held = await enqueue(h.store);
    const taken = await enqueue(h.store);
    await h.store.jobClaim({ workerId: 'worker-a', limit: 2, queues: ['default'], leaseMs: LEASE_MS });
    await h.advance(LEASE_MS - 1_000);
    const beat = await h.store.jobHeartbeat({
      workerId: 'worker-a',
      leases: [
        { jobId: held, attempt: 1 },
        { jobId: taken, attempt: 2 },
      ],
      leaseMs: LEASE_MS,
    });
    expect(beat.lost).toEqual([{ jobId: taken, attempt: 2 }]);
    expect(beat.renewed).toHaveLength(1);
    expect(beat.renewed[0]).toMatchObject({ jobId: held, attempt: 1, cancelRequested: false });
    const renewed = await mustGet(h.store, held);
    expect(renewed.leasedUntil!.getTime()).toBe(beat.renewed[0]!.leasedUntil.getTime());
    expect(renewed.leasedUntil!.getTime() - renewed.updatedAt.getTime()).toBe(LEASE_MS);

    // The renewed lease outlives the original deadline; the other one lapses and moves on.
    await h.advance(5_000);
    const reclaimed = await h.store.jobClaim({ workerId: 'worker-b', limit: 5, queues: ['default'], leaseMs: LEASE_MS });
    expect(reclaimed.map((j) => j.id)).toEqual([taken]);
    expect((await mustGet(h.store, held)).workerId).toBe('worker-a');
  });

  it('does not renew a lease that already lapsed, even when nobody took the job', async () => {
    const h = await ctx.open();
    const id = await enqueue(h.store);
    await claimOne(h.store, 'worker-a');
    await h.advance(LEASE_MS);
    const before = await h.snapshot();
    expect(await h.store.jobHeartbeat({ workerId: 'worker-a', leases: [{ jobId: id, attempt: 1 }], leaseMs: LEASE_MS })).toEqual({
      renewed: [],
      lost: [{ jobId: id, attempt: 1 }],
    });
    expect(await h.snapshot()).toEqual(before);
    expect(await h.store.jobHeartbeat({ workerId: 'worker-a', leases: [], leaseMs: LEASE_MS })).toEqual({ renewed: [], lost: [] });
  });

  it('sweeps an exhausted lapsed lease into dead_lettered with "lease expired", and leaves the rest', async () => {
    const h = await ctx.open();
    const exhausted = await enqueue(h.store, { maxAttempts: 1 });
    const withBudget = await enqueue(h.store, { maxAttempts: 2 });
    await h.store.jobClaim({ workerId: 'worker-a', limit: 2, queues: ['default'], leaseMs: LEASE_MS });
    await h.advance(LEASE_MS);
    const live = await enqueue(h.store, { queue: 'other', maxAttempts: 1 });
    await claimOne(h.store, 'worker-b', ['other']);

    expect(await h.store.jobExpireLeases({ limit: 10 })).toEqual([{ jobId: exhausted, attempt: 1, state: 'dead_lettered' }]);
    const job = await mustGet(h.store, exhausted);
    expect(job).toMatchObject({ state: 'dead_lettered', lastError: 'lease expired', leasedUntil: null, attempt: 1 });
    expect(job.finishedAt!.getTime()).toBe(job.updatedAt.getTime());
    expect(await mustGet(h.store, withBudget)).toMatchObject({ state: 'running', attempt: 1, workerId: 'worker-a' });
    expect(await mustGet(h.store, live)).toMatchObject({ state: 'running', attempt: 1, workerId: 'worker-b' });
    expect(await h.store.jobExpireLeases({ limit: 10 })).toEqual([]);
    // The lapsed job with budget is left for a claim, which charges the next attempt.
    expect(await claimOne(h.store, 'worker-c')).toMatchObject({ id: withBudget, attempt: 2 });
  });

  it('sweeps lapsed leases in a paused queue too, in batches no larger than the limit', async () => {
    const h = await ctx.open();
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push(await enqueue(h.store, { queue: 'bulk', maxAttempts: 1 }));
    await h.store.jobClaim({ workerId: 'w', limit: 3, queues: ['bulk'], leaseMs: LEASE_MS });
    await h.store.queuePause({ queue: 'bulk' });
    await h.advance(LEASE_MS);
    const first = await h.store.jobExpireLeases({ limit: 2 });
    const second = await h.store.jobExpireLeases({ limit: 2 });
    expect(first).toHaveLength(2);
    expect(second).toHaveLength(1);
    expect([...first, ...second].map((s) => s.jobId).sort()).toEqual([...ids].sort());
    for (const id of ids) expect((await mustGet(h.store, id)).state).toBe('dead_lettered');
  });

  it('hands a relinquished lease back at once with the attempt charged, or dead-letters the last attempt', async () => {
    const h = await ctx.open();
    const spare = await enqueue(h.store, { maxAttempts: 2 });
    const last = await enqueue(h.store, { maxAttempts: 1 });
    await h.store.jobClaim({ workerId: 'worker-a', limit: 2, queues: ['default'], leaseMs: LEASE_MS });
    const results = await h.store.jobRelinquishMany({
      workerId: 'worker-a',
      leases: [
        { jobId: spare, attempt: 1 },
        { jobId: last, attempt: 1 },
      ],
    });
    expect(results).toEqual([
      { jobId: spare, attempt: 1, status: 'applied', state: 'scheduled' },
      { jobId: last, attempt: 1, status: 'applied', state: 'dead_lettered' },
    ]);
    const requeued = await mustGet(h.store, spare);
    expect(requeued).toMatchObject({ state: 'scheduled', attempt: 1, workerId: null, leasedUntil: null });
    expect(requeued.runAt.getTime()).toBe(requeued.updatedAt.getTime());
    expect(await mustGet(h.store, last)).toMatchObject({ state: 'dead_lettered', lastError: 'lease relinquished on final attempt' });

    const again = await claimOne(h.store, 'worker-b');
    expect(again).toMatchObject({ id: spare, attempt: 2 });
    const before = await h.snapshot();
    expect(await h.store.jobRelinquishMany({ workerId: 'worker-a', leases: [{ jobId: spare, attempt: 1 }] })).toEqual([
      { jobId: spare, attempt: 1, status: 'stale' },
    ]);
    expect(await h.snapshot()).toEqual(before);
    await claimNone(h.store, 'worker-c');
  });
}
