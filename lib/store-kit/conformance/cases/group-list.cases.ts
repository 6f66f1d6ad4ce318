import { expect, it } from '@jest/globals';
import { InvalidArgumentError } from '../../../core/index.js';
import type { SuiteContext } from '../harness.js';
import { enqueueRun, mustGet, takeJobs as take } from './helpers.js';

/**
 * The groups listing (docs/groups.md): the groups with waiting jobs, a page at a time in group
 * order, each with its due and later jobs counted up to a cap, how long its oldest due job has
 * waited, and its key's cap.
 */
export function groupListCases(ctx: SuiteContext): void {
  it('issue 39 item 1: lists the groups with waiting jobs in group order, with their due and later jobs, the oldest due run time and the cap', async () => {
    const h = await ctx.open();
    const [firstDue] = await enqueueRun(h.store, 1, { group: 'b' });
    await h.advance(1_000);
    await enqueueRun(h.store, 2, { group: 'b' });
    await enqueueRun(h.store, 2, { group: 'b', delayMs: 60_000 });
    await enqueueRun(h.store, 1, { group: 'c', delayMs: 60_000 });
    await enqueueRun(h.store, 4);
    await h.advance(5_000);
    // Running and finished jobs are not waiting: a group with nothing else is not listed.
    await enqueueRun(h.store, 2, { group: 'a', priority: -5 });
    const running = await take(h.store, 2);
    expect(running.map((j) => j.group)).toEqual(['a', 'a']);
    await h.store.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId: running[0]!.id, attempt: 1, kind: 'succeeded' }] });
    await h.store.concurrencyLimitSet({ target: { key: 'b' }, max: 3 });

    const oldest = (await mustGet(h.store, firstDue!)).runAt;
    expect(await h.store.jobListGroups()).toEqual([
      { group: 'b', due: 3, dueCapped: false, later: 2, laterCapped: false, oldestDueAt: oldest, concurrencyMax: 3 },
      { group: 'c', due: 0, dueCapped: false, later: 1, laterCapped: false, oldestDueAt: null, concurrencyMax: null },
    ]);
    // A page at a time: the last group of a full page leads on.
    expect((await h.store.jobListGroups({ limit: 1 })).map((g) => g.group)).toEqual(['b']);
    expect((await h.store.jobListGroups({ limit: 1, after: 'b' })).map((g) => g.group)).toEqual(['c']);
    expect(await h.store.jobListGroups({ after: 'c' })).toEqual([]);
    // A job that comes due moves from later to due; the oldest due job is still the first.
    await h.advance(60_000);
    expect((await h.store.jobListGroups()).map((g) => [g.group, g.due, g.later, g.oldestDueAt])).toEqual([
      ['b', 5, 0, (await mustGet(h.store, firstDue!)).runAt],
      ['c', 1, 0, expect.any(Date)],
    ]);
  });

  it('issue 39 item 1: a group whose jobs a cap holds back is still listed, and its counts stop at 1,000 and say so', async () => {
    const h = await ctx.open();
    await h.store.concurrencyLimitSet({ target: { key: 'big' }, max: 1 });
    await enqueueRun(h.store, 1_002, { group: 'big' });
    await enqueueRun(h.store, 1_000, { group: 'big', delayMs: 60_000 });
    // The cap lets one run; the rest wait behind it, parked or not.
    expect(await take(h.store, 10)).toHaveLength(1);
    expect(await h.store.jobListGroups()).toEqual([
      { group: 'big', due: 1_000, dueCapped: true, later: 1_000, laterCapped: false, oldestDueAt: expect.any(Date), concurrencyMax: 1 },
    ]);
    await enqueueRun(h.store, 1, { group: 'big', delayMs: 60_000 });
    expect(await h.store.jobListGroups()).toEqual([expect.objectContaining({ later: 1_000, laterCapped: true })]);
  });

  it('issue 39 item 1: a bad group listing is refused in one sentence', async () => {
    const h = await ctx.open();
    for (const params of [{ limit: 0 }, { limit: 201 }, { limit: 1.5 }, { after: '' }, { after: 'a\u0007' }, { after: 'x'.repeat(201) }]) {
      const refused = await h.store.jobListGroups(params).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(InvalidArgumentError);
      expect((refused as Error).message).toMatch(/^(limit|after) must be [^\n]+\.$/);
    }
  });
}
