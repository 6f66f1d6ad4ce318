import { expect, it } from '@jest/globals';
import { InvalidArgumentError } from '../../../core/index.js';
import type { EnqueueInput, JobStore } from '../../../store/index.js';
import type { SuiteContext } from '../harness.js';
import { claimOne, enqueue, mustGet } from './helpers.js';

const id = (n: number) => `0190a5a1-0000-7000-8000-${String(n).padStart(12, '0')}`;

async function refusal(run: () => Promise<unknown>): Promise<Error> {
  const error = await run().then(
    () => new Error('expected a refusal'),
    (e: unknown) => e as Error,
  );
  expect(error).toBeInstanceOf(InvalidArgumentError);
  expect(error.message).toMatch(/^[^\n]+\.$/);
  return error;
}

async function finish(store: JobStore, jobId: string, kind: 'succeeded' | 'dead_lettered') {
  const job = await claimOne(store, 'w');
  expect(job.id).toBe(jobId);
  const outcome = kind === 'succeeded' ? { kind } : { kind, error: 'broken' };
  await store.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId, attempt: job.attempt, ...outcome } as never] });
}

/**
 * Issue 19, smaller bad-input gaps: dependency planning over a whole enqueueMany batch, in time
 * linear in its jobs and edges, with one answer on every store whatever is already stored.
 */
export function dependencyBatchCases(ctx: SuiteContext): void {
  it('issue 19: a chain of 20,000 jobs listed child-first is enqueued in one batch', async () => {
    const h = await ctx.open();
    const length = 20_000;
    // jobs[0] depends on jobs[1], which depends on jobs[2], ...: every child before its parent.
    const jobs: EnqueueInput[] = Array.from({ length }, (_, i) => ({ id: id(i), name: 'chain', payload: i, ...(i < length - 1 ? { dependsOn: [id(i + 1)] } : {}) }));
    const results = await h.store.jobEnqueueMany({ jobs });
    expect(results.every((r) => r.created)).toBe(true);
    expect(await h.countJobs()).toBe(length);
    expect(await mustGet(h.store, id(length - 1))).toMatchObject({ state: 'scheduled', pendingParents: 0 });
    expect(await mustGet(h.store, id(length - 2))).toMatchObject({ state: 'awaiting_parents', pendingParents: 1 });
    expect(await mustGet(h.store, id(0))).toMatchObject({ state: 'awaiting_parents', pendingParents: 1 });
  });

  it('issue 19: a cycle of 10,000 jobs is refused with one short sentence, and nothing is written', async () => {
    const h = await ctx.open();
    const length = 10_000;
    const jobs: EnqueueInput[] = Array.from({ length }, (_, i) => ({ id: id(i), name: 'ring', payload: i, dependsOn: [id((i + 1) % length)] }));
    const before = await h.snapshot();
    const error = await refusal(() => h.store.jobEnqueueMany({ jobs }));
    expect(error.message).toBe(`dependsOn forms a cycle of 10000 jobs: ${id(0)} -> ${id(1)} -> ${id(2)} -> … -> ${id(length - 1)} -> ${id(0)}.`);
    expect(await h.snapshot()).toEqual(before);
  });

  it('issue 19: a batch that re-enqueues a stored id and forms a cycle with a new job is refused on every store', async () => {
    const h = await ctx.open();
    await enqueue(h.store, { id: id(1), delayMs: 60_000 });
    const before = await h.snapshot();
    const error = await refusal(() =>
      h.store.jobEnqueueMany({
        jobs: [
          { id: id(1), name: 'again', payload: 1, dependsOn: [id(2)] },
          { id: id(2), name: 'new', payload: 2, dependsOn: [id(1)] },
        ],
      }),
    );
    expect(error.message).toBe(`dependsOn forms a cycle: ${id(1)} -> ${id(2)} -> ${id(1)}.`);
    expect(await h.snapshot()).toEqual(before);
  });

  it('issue 19: a re-enqueued id is checked as written: a parent that does not exist is refused', async () => {
    const h = await ctx.open();
    await enqueue(h.store, { id: id(1) });
    const before = await h.snapshot();
    const error = await refusal(() => h.store.jobEnqueueMany({ jobs: [{ id: id(1), name: 'again', payload: 1, dependsOn: [id(99)] }] }));
    expect(error.message).toBe(`Job ${id(1)} depends on ${id(99)}, which does not exist.`);
    expect(await h.snapshot()).toEqual(before);
  });

  it('issue 19: a new dependant of a re-enqueued id starts from the stored job, not from the copy in the batch', async () => {
    const h = await ctx.open();
    await enqueue(h.store, { id: id(1) });
    await enqueue(h.store, { id: id(2), maxAttempts: 1 });
    await finish(h.store, id(1), 'succeeded');
    await finish(h.store, id(2), 'dead_lettered');
    const results = await h.store.jobEnqueueMany({
      jobs: [
        { id: id(1), name: 'again', payload: 1 },
        { id: id(2), name: 'again', payload: 2 },
        { id: id(3), name: 'after.success', payload: 3, dependsOn: [id(1)] },
        { id: id(4), name: 'after.failure', payload: 4, dependsOn: [id(2)] },
      ],
    });
    expect(results.map((r) => r.created)).toEqual([false, false, true, true]);
    expect(await mustGet(h.store, id(3))).toMatchObject({ state: 'scheduled', pendingParents: 0 });
    expect(await mustGet(h.store, id(4))).toMatchObject({ state: 'cancelled', lastError: `parent ${id(2)} ended dead_lettered` });
  });
}
