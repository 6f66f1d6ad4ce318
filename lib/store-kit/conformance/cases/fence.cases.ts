import { expect, it } from '@jest/globals';
import type { Outcome } from '../../../store/index.js';
import type { SuiteContext } from '../harness.js';
import { claimOne, enqueue, LEASE_MS, mustGet } from './helpers.js';

type Report = Outcome extends infer O ? (O extends Outcome ? Omit<O, 'jobId' | 'attempt'> : never) : never;

const REPORTS: Array<[string, Report]> = [
  ['success', { kind: 'succeeded', output: { done: true } }],
  ['failure', { kind: 'failed', error: 'boom', retryDelayMs: 1_000 }],
  ['dead-letter', { kind: 'dead_lettered', error: 'fatal' }],
  ['quarantine', { kind: 'quarantined', reason: 'no handler' }],
];

export function fenceCases(ctx: SuiteContext): void {
  for (const [label, report] of REPORTS) {
    it(`refuses a ${label} from the wrong worker, the wrong attempt, or after the lease lapsed, changing nothing`, async () => {
      const h = await ctx.open();
      const id = await enqueue(h.store);
      const job = await claimOne(h.store, 'worker-a');
      const before = await h.snapshot();

      const wrongWorker = await h.store.jobCompleteMany({ workerId: 'worker-b', outcomes: [{ jobId: id, attempt: job.attempt, ...report } as Outcome] });
      expect(wrongWorker).toEqual([{ jobId: id, attempt: 1, status: 'stale' }]);
      const wrongAttempt = await h.store.jobCompleteMany({ workerId: 'worker-a', outcomes: [{ jobId: id, attempt: 2, ...report } as Outcome] });
      expect(wrongAttempt).toEqual([{ jobId: id, attempt: 2, status: 'stale' }]);
      expect(await h.snapshot()).toEqual(before);

      await h.advance(LEASE_MS);
      const expiredBefore = await h.snapshot();
      const lapsed = await h.store.jobCompleteMany({ workerId: 'worker-a', outcomes: [{ jobId: id, attempt: 1, ...report } as Outcome] });
      expect(lapsed).toEqual([{ jobId: id, attempt: 1, status: 'stale' }]);
      expect(await h.snapshot()).toEqual(expiredBefore);
    });
  }

  it('refuses a report for a job that does not exist', async () => {
    const h = await ctx.open();
    const before = await h.snapshot();
    const jobId = '0190a5a0-0000-7000-8000-00000000dead';
    expect(await h.store.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId, attempt: 1, kind: 'succeeded' }] })).toEqual([
      { jobId, attempt: 1, status: 'stale' },
    ]);
    expect(await h.snapshot()).toEqual(before);
  });

  it('applies an outcome once: the same report sent again is stale', async () => {
    const h = await ctx.open();
    const id = await enqueue(h.store);
    await claimOne(h.store, 'worker-a');
    const outcome: Outcome = { jobId: id, attempt: 1, kind: 'succeeded', output: 1 };
    expect(await h.store.jobCompleteMany({ workerId: 'worker-a', outcomes: [outcome] })).toEqual([
      { jobId: id, attempt: 1, status: 'applied', state: 'succeeded' },
    ]);
    const after = await h.snapshot();
    expect(await h.store.jobCompleteMany({ workerId: 'worker-a', outcomes: [outcome] })).toEqual([{ jobId: id, attempt: 1, status: 'stale' }]);
    expect(await h.snapshot()).toEqual(after);
  });

  it('records success with its output and ends the lease', async () => {
    const h = await ctx.open();
    const id = await enqueue(h.store);
    await claimOne(h.store, 'worker-a');
    await h.store.jobCompleteMany({ workerId: 'worker-a', outcomes: [{ jobId: id, attempt: 1, kind: 'succeeded', output: { total: 42, tags: ['a'] } }] });
    const job = await mustGet(h.store, id);
    expect(job).toMatchObject({ state: 'succeeded', attempt: 1, leasedUntil: null, output: { total: 42, tags: ['a'] }, workerId: 'worker-a' });
    expect(job.finishedAt!.getTime()).toBe(job.updatedAt.getTime());
  });

  it('reschedules a failure with attempts left after its retry delay, keeping the error and the attempt', async () => {
    const h = await ctx.open();
    const id = await enqueue(h.store, { maxAttempts: 3 });
    await claimOne(h.store, 'worker-a');
    const [result] = await h.store.jobCompleteMany({
      workerId: 'worker-a',
      outcomes: [{ jobId: id, attempt: 1, kind: 'failed', error: 'db timeout', retryDelayMs: 5_000 }],
    });
    expect(result).toEqual({ jobId: id, attempt: 1, status: 'applied', state: 'scheduled' });
    const job = await mustGet(h.store, id);
    expect(job).toMatchObject({ state: 'scheduled', attempt: 1, lastError: 'db timeout', workerId: null, leasedUntil: null, finishedAt: null });
    expect(job.runAt.getTime() - job.updatedAt.getTime()).toBe(5_000);
  });

  it('dead-letters a failure on the last attempt, and a non-retryable failure at once', async () => {
    const h = await ctx.open();
    const last = await enqueue(h.store, { maxAttempts: 1 });
    const fatal = await enqueue(h.store, { maxAttempts: 5 });
    await h.store.jobClaim({ workerId: 'w', limit: 2, queues: ['default'], leaseMs: LEASE_MS });
    const results = await h.store.jobCompleteMany({
      workerId: 'w',
      outcomes: [
        { jobId: last, attempt: 1, kind: 'failed', error: 'still broken', retryDelayMs: 1_000 },
        { jobId: fatal, attempt: 1, kind: 'dead_lettered', error: 'bad card' },
      ],
    });
    expect(results.map((r) => r.status === 'applied' && r.state)).toEqual(['dead_lettered', 'dead_lettered']);
    expect(await mustGet(h.store, last)).toMatchObject({ state: 'dead_lettered', attempt: 1, lastError: 'still broken', leasedUntil: null });
    expect(await mustGet(h.store, fatal)).toMatchObject({ state: 'dead_lettered', attempt: 1, lastError: 'bad card' });
    expect((await mustGet(h.store, fatal)).finishedAt).not.toBeNull();
  });

  it('quarantines without charging further attempts', async () => {
    const h = await ctx.open();
    const id = await enqueue(h.store, { maxAttempts: 4 });
    await claimOne(h.store, 'worker-a');
    await h.store.jobCompleteMany({ workerId: 'worker-a', outcomes: [{ jobId: id, attempt: 1, kind: 'quarantined', reason: 'no handler for test.job' }] });
    expect(await mustGet(h.store, id)).toMatchObject({ state: 'quarantined', attempt: 1, lastError: 'no handler for test.job', leasedUntil: null });
    await h.advance(LEASE_MS * 10);
    expect(await h.store.jobClaim({ workerId: 'w', limit: 5, queues: ['default'], leaseMs: LEASE_MS })).toEqual([]);
  });

  it('applies each report of a mixed batch on its own: applied ones change, stale ones do not', async () => {
    const h = await ctx.open();
    const a = await enqueue(h.store);
    const b = await enqueue(h.store);
    await h.store.jobClaim({ workerId: 'w', limit: 2, queues: ['default'], leaseMs: LEASE_MS });
    const results = await h.store.jobCompleteMany({
      workerId: 'w',
      outcomes: [
        { jobId: a, attempt: 1, kind: 'succeeded' },
        { jobId: b, attempt: 7, kind: 'succeeded' },
      ],
    });
    expect(results).toEqual([
      { jobId: a, attempt: 1, status: 'applied', state: 'succeeded' },
      { jobId: b, attempt: 7, status: 'stale' },
    ]);
    expect((await mustGet(h.store, b)).state).toBe('running');
  });
}
