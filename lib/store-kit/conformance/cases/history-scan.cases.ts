import { expect, it } from '@jest/globals';
import { InvalidArgumentError } from '../../../core/index.js';
import type { HistoryEntry } from '../../../store/index.js';
import type { SuiteContext } from '../harness.js';
import { enqueueRun, succeed, takeJobs as take } from './helpers.js';

/** The whole history read in (job id, entry id) order, a page at a time, for `verifyHistory` (docs/verify.md). */
export function historyScanCases(ctx: SuiteContext): void {
  it('issue 40: historyScan reads every entry once, each job\'s entries together and oldest first, a page after the last', async () => {
    const h = await ctx.open();
    const ids = await enqueueRun(h.store, 5);
    for (const job of await take(h.store, 3)) await succeed(h.store, job);
    const whole = await h.store.historyScan({ limit: 100 });
    // Each job's own history, in job id order: what jobHistory returns, job after job. A position
    // is left out: MySQL numbers an entry after it commits, so two reads may see it before and after.
    const byJob = await Promise.all([...ids].sort().map((jobId) => h.store.jobHistory({ jobId })));
    const entries = (list: readonly HistoryEntry[]) => list.map(({ position: _, ...entry }) => entry);
    expect(entries(whole)).toEqual(entries(byJob.flat()));
    expect(whole).toHaveLength(5 + 3 * 2);
    const paged = [];
    let after: { jobId: string; id: number } | undefined;
    for (;;) {
      const page = await h.store.historyScan({ limit: 4, ...(after ? { after } : {}) });
      paged.push(...page);
      if (page.length < 4) break;
      after = { jobId: page.at(-1)!.jobId, id: page.at(-1)!.id };
    }
    expect(entries(paged)).toEqual(entries(whole));
    expect(await h.store.historyScan({ after: { jobId: whole.at(-1)!.jobId, id: whole.at(-1)!.id } })).toEqual([]);
  });

  it('issue 40: a bad historyScan page is refused in one sentence', async () => {
    const h = await ctx.open();
    for (const params of [{ limit: 0 }, { limit: 10_001 }, { after: { jobId: 'nope', id: 1 } }, { after: { jobId: '01900000-0000-7000-8000-000000000001', id: 0 } }, { after: 'x' }]) {
      const refused = await h.store.historyScan(params as never).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(InvalidArgumentError);
      expect((refused as Error).message).toMatch(/^[^\n]+\.$/);
    }
  });
}
