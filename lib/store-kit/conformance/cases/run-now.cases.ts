import { expect, it } from '@jest/globals';
import { IllegalTransitionError, JobNotFoundError } from '../../../core/index.js';
import type { SuiteContext } from '../harness.js';
import { claimNone, claimOne, enqueue, mustGet } from './helpers.js';

const MISSING = '0190a5a0-0000-7000-8000-00000000f00d';

export function runNowCases(ctx: SuiteContext): void {
  it('makes a job with a later run time due now, keeps its attempts, and audits it', async () => {
    const h = await ctx.open();
    const id = await enqueue(h.store, { delayMs: 3_600_000 });
    await claimNone(h.store);
    const due = await h.store.jobRunNow({ jobId: id, actor: 'ops' });
    expect(due).toMatchObject({ id, state: 'scheduled', attempt: 0 });
    expect(due.runAt.getTime()).toBe(due.updatedAt.getTime());
    expect(await mustGet(h.store, id)).toEqual(due);
    expect(await claimOne(h.store)).toMatchObject({ id, attempt: 1 });
    expect((await h.store.auditList({ limit: 1 }))[0]).toMatchObject({ actor: 'ops', action: 'job.run_now', target: id });
  });

  it('ends a retry wait at once, keeping the attempt that failed and its error', async () => {
    const h = await ctx.open();
    const id = await enqueue(h.store, { maxAttempts: 3 });
    await claimOne(h.store);
    await h.store.jobCompleteMany({ workerId: 'worker-a', outcomes: [{ jobId: id, attempt: 1, kind: 'failed', error: 'flaky', retryDelayMs: 600_000 }] });
    await claimNone(h.store);
    expect(await h.store.jobRunNow({ jobId: id })).toMatchObject({ state: 'scheduled', attempt: 1, lastError: 'flaky' });
    expect(await claimOne(h.store)).toMatchObject({ id, attempt: 2 });
  });

  it('leaves a job that is already due as it was', async () => {
    const h = await ctx.open();
    const id = await enqueue(h.store);
    await h.advance(1_000);
    const before = await mustGet(h.store, id);
    expect(await h.store.jobRunNow({ jobId: id })).toEqual(before);
  });

  it('refuses a job that is running, finished or awaiting parents, and an unknown id, changing nothing', async () => {
    const h = await ctx.open();
    const running = await enqueue(h.store, { queue: 'r' });
    await claimOne(h.store, 'w', ['r']);
    const parent = await enqueue(h.store, { queue: 'p' });
    const child = await enqueue(h.store, { queue: 'c', dependsOn: [parent] });
    const before = await h.snapshot();
    for (const id of [running, child]) await expect(h.store.jobRunNow({ jobId: id })).rejects.toThrow(IllegalTransitionError);
    await expect(h.store.jobRunNow({ jobId: running })).rejects.toThrow(`Job ${running} is running; only a scheduled job can be run now.`);
    await expect(h.store.jobRunNow({ jobId: MISSING })).rejects.toThrow(JobNotFoundError);
    expect(await h.snapshot()).toEqual(before);
  });
}
