import { expect, it } from '@jest/globals';
import { InvalidArgumentError } from '../../../core/index.js';
import type { SuiteContext } from '../harness.js';
import { enqueue, LEASE_MS, mustGet } from './helpers.js';

/**
 * Priorities: claims take due jobs by priority (lower first), then run time, then enqueue order,
 * with or without limits, and with lapsed leases merged into the same order.
 */
export function priorityCases(ctx: SuiteContext): void {
  const base = Date.UTC(2020, 0, 1);
  const claimIds = async (store: Awaited<ReturnType<SuiteContext['open']>>['store'], limit: number, queues = ['default']) =>
    (await store.jobClaim({ workerId: 'w', limit, queues, leaseMs: LEASE_MS })).map((j) => j.id);

  it('stores the priority (default 0) and reads it back', async () => {
    const { store } = await ctx.open();
    const plain = await enqueue(store);
    const urgent = await enqueue(store, { priority: -10 });
    const last = await enqueue(store, { priority: 10 });
    expect((await mustGet(store, plain)).priority).toBe(0);
    expect((await mustGet(store, urgent)).priority).toBe(-10);
    expect((await mustGet(store, last)).priority).toBe(10);
  });

  it('claims by priority first, then runAt, then enqueue order', async () => {
    const h = await ctx.open();
    const lowEarly = await enqueue(h.store, { priority: 5, runAt: new Date(base) });
    const highLateA = await enqueue(h.store, { priority: -1, runAt: new Date(base + 2_000) });
    const highLateB = await enqueue(h.store, { priority: -1, runAt: new Date(base + 2_000) });
    const highEarly = await enqueue(h.store, { priority: -1, runAt: new Date(base + 1_000) });
    const plain = await enqueue(h.store, { runAt: new Date(base) });
    const future = await enqueue(h.store, { priority: -10, delayMs: 3_600_000 });

    expect(await claimIds(h.store, 2)).toEqual([highEarly, highLateA]);
    expect(await claimIds(h.store, 10)).toEqual([highLateB, plain, lowEarly]);
    expect((await mustGet(h.store, future)).state).toBe('scheduled');
  });

  it('passes future-dated urgent jobs on the way to due jobs of later priorities', async () => {
    const h = await ctx.open();
    const futures = await h.store.jobEnqueueMany({
      jobs: Array.from({ length: 30 }, (_, i) => ({ name: 'test.job', payload: {}, priority: -10 + (i % 10), delayMs: 3_600_000 })),
    });
    const due = await enqueue(h.store, { priority: 7, runAt: new Date(base) });
    const dueToo = await enqueue(h.store, { priority: 9, runAt: new Date(base) });
    expect(await claimIds(h.store, 5)).toEqual([due, dueToo]);
    expect(futures.filter((r) => r.created)).toHaveLength(30);
    await h.advance(3_600_000);
    // The two claimed above hold lapsed leases by now; this claim leaves those out.
    const claimed = await h.store.jobClaim({ workerId: 'w', limit: 50, queues: ['default'], leaseMs: LEASE_MS, includeLapsed: false });
    expect(claimed.map((j) => j.priority)).toEqual([...Array.from({ length: 10 }, (_, p) => [p - 10, p - 10, p - 10])].flat());
  });

  it('keeps priority order across queues and under a queue limit', async () => {
    const h = await ctx.open();
    await h.store.concurrencyLimitSet({ target: { queue: 'mail' }, max: 1 });
    const mailLow = await enqueue(h.store, { queue: 'mail', priority: 3, runAt: new Date(base) });
    const mailHigh = await enqueue(h.store, { queue: 'mail', priority: -3, runAt: new Date(base + 1_000) });
    const smsMid = await enqueue(h.store, { queue: 'sms', priority: 0, runAt: new Date(base) });
    expect(await claimIds(h.store, 10, ['mail', 'sms'])).toEqual([mailHigh, smsMid]);
    expect((await mustGet(h.store, mailLow)).state).toBe('scheduled');
  });

  it('merges lapsed leases into the same order as due jobs', async () => {
    const h = await ctx.open();
    const lapsedLow = await enqueue(h.store, { priority: 4, runAt: new Date(base) });
    expect(await claimIds(h.store, 1)).toEqual([lapsedLow]);
    await h.advance(LEASE_MS + 1_000);
    const dueHigh = await enqueue(h.store, { priority: -4 });
    const duePlain = await enqueue(h.store);
    const claimed = await h.store.jobClaim({ workerId: 'other', limit: 2, queues: ['default'], leaseMs: LEASE_MS, includeLapsed: true });
    expect(claimed.map((j) => j.id)).toEqual([dueHigh, duePlain]);
    const next = await h.store.jobClaim({ workerId: 'other', limit: 2, queues: ['default'], leaseMs: LEASE_MS, includeLapsed: true });
    expect(next.map((j) => [j.id, j.attempt])).toEqual([[lapsedLow, 2]]);
  });

  it('refuses a priority that is not a whole number from -10 to 10, writing nothing', async () => {
    const h = await ctx.open();
    for (const bad of [11, -11, 1.5, Number.NaN, '1', null]) {
      await expect(h.store.jobEnqueue({ job: { name: 'test.job', payload: {}, priority: bad as number } })).rejects.toThrow(InvalidArgumentError);
    }
    await expect(h.store.jobEnqueue({ job: { name: 'test.job', payload: {}, priority: 11 } })).rejects.toThrow(
      'priority must be a whole number from -10 (first) to 10 (last), got 11.',
    );
    expect(await h.store.jobList({})).toHaveLength(0);
  });
}
