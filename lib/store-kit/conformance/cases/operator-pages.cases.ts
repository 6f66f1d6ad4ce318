import { expect, it } from '@jest/globals';
import type { JobState } from '../../../core/index.js';
import type { QueueSummary } from '../../../store/index.js';
import type { SuiteContext } from '../harness.js';
import { claimOne, enqueue, expectRefused } from './helpers.js';

const names = (queues: readonly QueueSummary[]) => queues.map((queue) => queue.name);

/**
 * The pages an operator's screen reads (issue 35 item 9): a page of queues, of a job's history and
 * of limits costs its size, and the totals come back as totals, whatever the store holds.
 */
export function operatorPageCases(ctx: SuiteContext): void {
  it('issue 35 item 9: queueList pages through the queues in name order, and reads named queues alone', async () => {
    const h = await ctx.open();
    const queues = Array.from({ length: 12 }, (_, i) => `q${String(i).padStart(2, '0')}`);
    for (const queue of queues) await enqueue(h.store, { queue });
    await enqueue(h.store, { queue: 'q03' });
    // A paused queue with no jobs is a queue too.
    await h.store.queuePause({ queue: 'q05x' });
    const all = await h.store.queueList();
    expect(names(all)).toEqual([...queues.slice(0, 6), 'q05x', ...queues.slice(6)].sort());

    const pages: string[][] = [];
    let after: string | undefined;
    for (;;) {
      const page = await h.store.queueList({ limit: 5, ...(after === undefined ? {} : { after }) });
      if (page.length === 0) break;
      pages.push(names(page));
      after = page.at(-1)!.name;
      if (page.length < 5) break;
    }
    expect(pages.map((page) => page.length)).toEqual([5, 5, 3]);
    expect(pages.flat()).toEqual(names(all));
    const third = (await h.store.queueList({ limit: 5 }))[3]!;
    expect(third).toEqual({ name: 'q03', paused: false, counts: { scheduled: 2 } });
    expect((await h.store.queueList({ limit: 5, after: 'q05' }))[0]).toEqual({ name: 'q05x', paused: true, counts: {} });

    const named = await h.store.queueList({ queues: ['q09', 'q03', 'no-such-queue', 'q05x', 'q03'] });
    expect(named).toEqual([
      { name: 'q03', paused: false, counts: { scheduled: 2 } },
      { name: 'q05x', paused: true, counts: {} },
      { name: 'q09', paused: false, counts: { scheduled: 1 } },
    ]);
    expect(await h.store.queueList({ queues: [] })).toEqual([]);
  });

  it('issue 35 item 9: jobCountTotals sums the counts of every queue by state, and counts the queues', async () => {
    const h = await ctx.open();
    expect(await h.store.jobCountTotals()).toEqual({ counts: {}, queues: 0 });
    for (const queue of ['mail', 'mail', 'reports', 'default']) await enqueue(h.store, { queue });
    await claimOne(h.store, 'w', ['default']);
    await h.store.queuePause({ queue: 'idle' });
    const totals = await h.store.jobCountTotals();
    expect(totals).toEqual({ counts: { scheduled: 3, running: 1 }, queues: 4 });
    // The same as summing the listing, which reads every queue.
    const summed: Partial<Record<JobState, number>> = {};
    const listed = await h.store.queueList();
    for (const queue of listed) for (const [state, n] of Object.entries(queue.counts)) summed[state as JobState] = (summed[state as JobState] ?? 0) + n;
    expect(totals).toEqual({ counts: summed, queues: listed.length });
  });

  it('issue 35 item 9: jobHistory reads a page of the newest entries before an entry, oldest first', async () => {
    const h = await ctx.open();
    const id = await enqueue(h.store, { name: 'billing.charge', maxAttempts: 5 });
    for (let attempt = 1; attempt <= 5; attempt++) {
      await claimOne(h.store, 'w');
      await h.store.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId: id, attempt, kind: 'failed', error: `declined ${attempt}`, retryDelayMs: 0 }] });
    }
    const full = await h.store.jobHistory({ jobId: id });
    expect(full).toHaveLength(11);
    const newest = await h.store.jobHistory({ jobId: id, limit: 4 });
    expect(newest).toEqual(full.slice(-4));
    const before = await h.store.jobHistory({ jobId: id, limit: 4, before: newest[0]!.id });
    expect(before).toEqual(full.slice(-8, -4));
    expect(await h.store.jobHistory({ jobId: id, limit: 4, before: before[0]!.id })).toEqual(full.slice(0, 3));
    expect(await h.store.jobHistory({ jobId: id, limit: 4, before: full[0]!.id })).toEqual([]);
    expect(await h.store.jobHistory({ jobId: id, limit: 1000 })).toEqual(full);
  });

  it('issue 35 item 9: concurrencyLimitList and rateLimitList page through the limits in key order', async () => {
    const h = await ctx.open();
    for (const key of ['t1', 't2', 't3']) {
      await h.store.concurrencyLimitSet({ target: { key }, max: 2 });
      await h.store.rateLimitSet({ target: { key }, rate: { max: 5, perMs: 60_000 } });
    }
    for (const queue of ['mail', 'reports']) {
      await h.store.concurrencyLimitSet({ target: { queue }, max: 3 });
      await h.store.rateLimitSet({ target: { queue }, rate: { max: 1, perMs: 1_000 } });
    }
    const limits = await h.store.concurrencyLimitList();
    expect(limits).toEqual([{ key: 't1', max: 2 }, { key: 't2', max: 2 }, { key: 't3', max: 2 }, { queue: 'mail', max: 3 }, { queue: 'reports', max: 3 }]);
    const first = await h.store.concurrencyLimitList({ limit: 2 });
    expect(first).toEqual(limits.slice(0, 2));
    expect(await h.store.concurrencyLimitList({ limit: 2, after: { key: 't2' } })).toEqual(limits.slice(2, 4));
    expect(await h.store.concurrencyLimitList({ limit: 2, after: { queue: 'mail' } })).toEqual(limits.slice(4));
    const rates = await h.store.rateLimitList();
    expect(rates.map((rate) => ('queue' in rate ? rate.queue : rate.key))).toEqual(['t1', 't2', 't3', 'mail', 'reports']);
    expect(await h.store.rateLimitList({ limit: 3, after: { key: 't1' } })).toEqual(rates.slice(1, 4));
  });

  it('issue 35 item 9: the paged reads refuse a page they cannot read, in one sentence, before reading', async () => {
    const h = await ctx.open();
    const id = await enqueue(h.store);
    await expectRefused(() => h.store.queueList({ limit: 0 }), /^limit must be a whole number from 1 to 1000, got 0\.$/);
    await expectRefused(() => h.store.queueList({ limit: 1001 }), /^limit must be a whole number from 1 to 1000/);
    await expectRefused(() => h.store.queueList({ after: 'q01' }), /^queueList takes after only with limit, the size of the page\.$/);
    await expectRefused(() => h.store.queueList({ limit: 5, queues: ['a'] }), /^queueList takes either queues, or limit and after, not both\.$/);
    await expectRefused(() => h.store.queueList({ limit: 5, after: 'bad name!' }), /^after must be 1 to 64 characters/);
    await expectRefused(() => h.store.jobHistory({ jobId: id, before: 3 }), /^jobHistory takes before only with limit, the size of the page\.$/);
    await expectRefused(() => h.store.jobHistory({ jobId: id, limit: 5, before: -1 }), /^before must be a whole number from 1 to/);
    await expectRefused(() => h.store.concurrencyLimitList({ after: { key: 'x' } }), /^concurrencyLimitList takes after only with limit, the size of the page\.$/);
    await expectRefused(() => h.store.rateLimitList({ limit: 2, after: {} as never }), /^A rate limit needs a target: \{ queue \} or \{ key \}\.$/);
  });
}
