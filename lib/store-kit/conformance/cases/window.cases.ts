import { describe, expect, it } from '@jest/globals';
import { IllegalTransitionError } from '../../../core/index.js';
import type { EnqueueInput, JobStore } from '../../../store/index.js';
import type { SuiteContext } from '../harness.js';
import { claimNone, claimOne, expectRefused, mustGet } from './helpers.js';

const id = (n: number) => `0190a5a0-0000-7000-8000-${String(n).padStart(12, '0')}`;
const debounced = (v: number, extra: Partial<EnqueueInput> = {}): EnqueueInput => ({
  name: 'search.reindex',
  payload: { v },
  debounce: { key: 'doc:7', windowMs: 10_000, maxDelayMs: 25_000 },
  ...extra,
});
const throttled = (v: number, extra: Partial<EnqueueInput> = {}): EnqueueInput => ({ name: 'alert.send', payload: { v }, throttle: { key: 'host:a', windowMs: 60_000 }, ...extra });

async function succeed(store: JobStore, jobId: string): Promise<void> {
  const job = await claimOne(store, 'w');
  expect(job.id).toBe(jobId);
  await store.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId, attempt: job.attempt, kind: 'succeeded' }] });
}

/**
 * Debounce and throttle windows (issue 39 item 4, docs/debounce-and-throttle.md). A debounce keeps
 * one job per (wire name, key) that has not started, and each enqueue hands it its payload and
 * pushes its run time, never past the window's end; a throttle's first job opens a window in which
 * the key's enqueues write nothing.
 */
export function windowCases(ctx: SuiteContext): void {
  describe('issue 39 item 4: debounce', () => {
    it('the first enqueue waits a window; the next ones hand it their payload and push its run time, saying so', async () => {
      const h = await ctx.open();
      const first = await h.store.jobEnqueue({ job: debounced(1) });
      expect(first).toEqual({ id: first.id, created: true });
      const job = await mustGet(h.store, first.id);
      expect(job.window).toEqual({ kind: 'debounce', key: 'doc:7', endsAt: new Date(job.createdAt.getTime() + 25_000) });
      expect(job.runAt.getTime() - job.createdAt.getTime()).toBe(10_000);
      await h.advance(6_000);
      await claimNone(h.store);
      expect(await h.store.jobEnqueue({ job: debounced(2) })).toEqual({ id: first.id, created: false, deduplicated: 'debounced' });
      const pushed = await mustGet(h.store, first.id);
      expect(pushed).toMatchObject({ payload: { v: 2 }, state: 'scheduled', attempt: 0 });
      expect(pushed.runAt.getTime() - pushed.updatedAt.getTime()).toBe(10_000);
      expect(await h.countJobs()).toBe(1);
      // Quiet for less than a window after the last enqueue: not due; a whole window: due, with the last payload.
      await h.advance(8_000);
      await claimNone(h.store);
      await h.advance(2_000);
      expect(await claimOne(h.store, 'w')).toMatchObject({ id: first.id, payload: { v: 2 }, attempt: 1 });
    });

    it('a key that never goes quiet still runs by the end of its window (maxDelayMs after the first enqueue)', async () => {
      const h = await ctx.open();
      const { id: jobId } = await h.store.jobEnqueue({ job: debounced(1) });
      await h.advance(9_000);
      await h.store.jobEnqueue({ job: debounced(2) });
      await h.advance(9_000);
      await h.store.jobEnqueue({ job: debounced(3) });
      const job = await mustGet(h.store, jobId);
      expect(job.runAt.getTime()).toBe(job.window!.endsAt.getTime());
      await h.advance(6_000);
      await claimNone(h.store);
      // Past the end, an enqueue makes the job due at once.
      await h.advance(2_000);
      await h.store.jobEnqueue({ job: debounced(4) });
      expect(await claimOne(h.store, 'w')).toMatchObject({ id: jobId, payload: { v: 4 } });
    });

    it('once the job has started, the next enqueue is a new job, so the last payload still runs after it', async () => {
      const h = await ctx.open();
      const { id: first } = await h.store.jobEnqueue({ job: debounced(1) });
      await h.advance(10_000);
      await claimOne(h.store, 'w');
      const second = await h.store.jobEnqueue({ job: debounced(2) });
      expect(second.created).toBe(true);
      expect(second.id).not.toBe(first);
      expect(await mustGet(h.store, first)).toMatchObject({ state: 'running', payload: { v: 1 } });
      // A job that failed and waits to retry has started too: it is not handed new payloads.
      await h.store.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId: first, attempt: 1, kind: 'failed', error: 'boom', retryDelayMs: 60_000 }] });
      expect(await h.store.jobEnqueue({ job: debounced(3) })).toEqual({ id: second.id, created: false, deduplicated: 'debounced' });
      expect(await mustGet(h.store, first)).toMatchObject({ state: 'scheduled', attempt: 1, payload: { v: 1 } });
      expect(await mustGet(h.store, second.id)).toMatchObject({ payload: { v: 3 } });
    });

    it('a replay that would give the key two jobs that have not started is refused, until the other one starts or is cancelled', async () => {
      const h = await ctx.open();
      const { id: first } = await h.store.jobEnqueue({ job: debounced(1, { maxAttempts: 1 }) });
      await h.advance(10_000);
      const job = await claimOne(h.store, 'w');
      await h.store.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId: first, attempt: job.attempt, kind: 'failed', error: 'boom', retryDelayMs: 0 }] });
      expect(await mustGet(h.store, first)).toMatchObject({ state: 'dead_lettered' });
      const { id: second } = await h.store.jobEnqueue({ job: debounced(2) });
      const before = await h.snapshot();
      await expectRefused(
        () => h.store.jobReplay({ jobId: first }),
        new RegExp(`^Job ${first} cannot be replayed while job ${second} takes the enqueues of its debounce key "doc:7" for search.reindex;`),
        IllegalTransitionError,
      );
      expect(await h.snapshot()).toEqual(before);
      await h.store.jobCancel({ jobId: second });
      await h.store.jobReplay({ jobId: first });
      expect(await h.store.jobEnqueue({ job: debounced(3) })).toEqual({ id: first, created: false, deduplicated: 'debounced' });
    });

    it('a key is per wire name and per kind: another name, a throttle or a unique key of the same text is another job', async () => {
      const h = await ctx.open();
      await h.store.jobEnqueue({ job: debounced(1) });
      expect((await h.store.jobEnqueue({ job: debounced(1, { name: 'search.other' }) })).created).toBe(true);
      expect((await h.store.jobEnqueue({ job: debounced(1, { debounce: { key: 'doc:8', windowMs: 10_000 } }) })).created).toBe(true);
      expect((await h.store.jobEnqueue({ job: { name: 'search.reindex', payload: 1, throttle: { key: 'doc:7', windowMs: 10_000 } } })).created).toBe(true);
      expect((await h.store.jobEnqueue({ job: { name: 'search.reindex', payload: 1, uniqueKey: 'doc:7' } })).created).toBe(true);
      expect(await h.countJobs()).toBe(5);
    });

    it('enqueueMany: later jobs of the batch with the key give the first their payload, and it keeps its window', async () => {
      const h = await ctx.open();
      const results = await h.store.jobEnqueueMany({ jobs: [debounced(1, { id: id(1) }), { name: 'plain', payload: 1 }, debounced(2, { id: id(2) }), debounced(3, { id: id(3) })] });
      expect(results[0]).toEqual({ id: id(1), created: true });
      expect(results[2]).toEqual({ id: id(1), created: false, deduplicated: 'debounced' });
      expect(results[3]).toEqual({ id: id(1), created: false, deduplicated: 'debounced' });
      const job = await mustGet(h.store, id(1));
      expect(job).toMatchObject({ payload: { v: 3 } });
      expect(job.runAt.getTime() - job.createdAt.getTime()).toBe(10_000);
      expect(await h.store.jobGet({ jobId: id(2) })).toBeNull();
      expect(await h.countJobs()).toBe(2);
    });

    it('maxDelayMs defaults to ten windows', async () => {
      const h = await ctx.open();
      const { id: jobId } = await h.store.jobEnqueue({ job: { name: 'n', payload: 1, debounce: { key: 'k', windowMs: 1_000 } } });
      const job = await mustGet(h.store, jobId);
      expect(job.window!.endsAt.getTime() - job.createdAt.getTime()).toBe(10_000);
    });
  });

  describe('issue 39 item 4: throttle', () => {
    it('the first enqueue runs and opens a window; inside it the key writes nothing and returns the opener', async () => {
      const h = await ctx.open();
      const first = await h.store.jobEnqueue({ job: throttled(1) });
      expect(first.created).toBe(true);
      const opener = await mustGet(h.store, first.id);
      expect(opener.window).toEqual({ kind: 'throttle', key: 'host:a', endsAt: new Date(opener.createdAt.getTime() + 60_000) });
      expect(opener.runAt.getTime()).toBe(opener.createdAt.getTime());
      const before = await h.snapshot();
      expect(await h.store.jobEnqueue({ job: throttled(2, { queue: 'other', delayMs: 5_000 }) })).toEqual({ id: first.id, created: false, deduplicated: 'throttled' });
      expect(await h.snapshot()).toEqual(before);
      // Finishing does not end the window: it is time that does.
      await succeed(h.store, first.id);
      await h.advance(59_000);
      expect(await h.store.jobEnqueue({ job: throttled(3) })).toEqual({ id: first.id, created: false, deduplicated: 'throttled' });
      await h.advance(1_000);
      const next = await h.store.jobEnqueue({ job: throttled(4) });
      expect(next.created).toBe(true);
      expect(await h.store.jobEnqueue({ job: throttled(5) })).toEqual({ id: next.id, created: false, deduplicated: 'throttled' });
      expect(await h.countJobs()).toBe(2);
    });

    it('a throttled job may be delayed; its window opens when it is enqueued', async () => {
      const h = await ctx.open();
      const { id: jobId } = await h.store.jobEnqueue({ job: throttled(1, { delayMs: 120_000 }) });
      const job = await mustGet(h.store, jobId);
      expect(job.window!.endsAt.getTime() - job.createdAt.getTime()).toBe(60_000);
      expect(job.runAt.getTime() - job.createdAt.getTime()).toBe(120_000);
    });

    it('enqueueMany: later jobs of the batch with the key are dropped in favour of the first', async () => {
      const h = await ctx.open();
      const results = await h.store.jobEnqueueMany({ jobs: [throttled(1, { id: id(1) }), throttled(2, { id: id(2) }), throttled(3, { id: id(3), throttle: { key: 'host:b', windowMs: 1 } })] });
      expect(results).toEqual([
        { id: id(1), created: true },
        { id: id(1), created: false, deduplicated: 'throttled' },
        { id: id(3), created: true },
      ]);
      expect(await mustGet(h.store, id(1))).toMatchObject({ payload: { v: 1 } });
    });

    it('retention keeps an opener until its window ends, so the window outlives a short retention', async () => {
      const h = await ctx.open();
      const { id: opener } = await h.store.jobEnqueue({ job: throttled(1, { throttle: { key: 'host:a', windowMs: 3_600_000 } }) });
      const { id: plain } = await h.store.jobEnqueue({ job: { name: 'alert.send', payload: 0 } });
      // A debounced job's window is only its latest run time: retention treats it as any job.
      const { id: debouncedJob } = await h.store.jobEnqueue({ job: { name: 'alert.send', payload: 1, debounce: { key: 'd', windowMs: 1, maxDelayMs: 3_600_000 } } });
      await succeed(h.store, opener);
      await succeed(h.store, plain);
      await h.advance(1);
      await succeed(h.store, debouncedJob);
      await h.advance(120_000);
      expect(await h.store.jobPurge({ olderThanMs: 60_000, limit: 100 })).toBe(2);
      expect(await h.store.jobGet({ jobId: plain })).toBeNull();
      expect(await h.store.jobGet({ jobId: debouncedJob })).toBeNull();
      expect(await h.store.jobEnqueue({ job: throttled(2) })).toEqual({ id: opener, created: false, deduplicated: 'throttled' });
      await h.advance(3_600_000);
      expect(await h.store.jobPurge({ olderThanMs: 60_000, limit: 100 })).toBe(1);
      expect((await h.store.jobEnqueue({ job: throttled(3) })).created).toBe(true);
    });

    it('the lean finish keeps the opener of a throttle window', async () => {
      const h = await ctx.open({ finish: 'lean' });
      const { id: opener } = await h.store.jobEnqueue({ job: throttled(1) });
      const { id: plain } = await h.store.jobEnqueue({ job: { name: 'alert.send', payload: 0 } });
      await succeed(h.store, opener);
      await succeed(h.store, plain);
      expect(await h.store.jobGet({ jobId: plain })).toBeNull();
      expect(await mustGet(h.store, opener)).toMatchObject({ state: 'succeeded' });
      expect(await h.store.jobEnqueue({ job: throttled(2) })).toEqual({ id: opener, created: false, deduplicated: 'throttled' });
    });
  });

  it('issue 39 item 4: a window that cannot be kept is refused in one sentence before anything is written', async () => {
    const h = await ctx.open();
    const before = await h.snapshot();
    const refused = (job: Partial<EnqueueInput>, pattern: RegExp) => expectRefused(() => h.store.jobEnqueue({ job: { name: 'n', payload: 1, ...job } }), pattern);
    await refused({ debounce: { key: 'k', windowMs: 1 }, throttle: { key: 'k', windowMs: 1 } }, /debounce and throttle cannot both be set/);
    await refused({ debounce: { key: 'k', windowMs: 1 }, delayMs: 5 }, /debounce cannot be combined with delayMs/);
    await refused({ debounce: { key: 'k', windowMs: 1 }, runAt: new Date() }, /debounce cannot be combined with runAt/);
    await refused({ debounce: { key: 'k', windowMs: 1 }, uniqueKey: 'k' }, /debounce cannot be combined with uniqueKey/);
    await refused({ throttle: { key: 'k', windowMs: 1 }, dependsOn: [id(9)] }, /throttle cannot be combined with dependsOn/);
    await refused({ debounce: { key: 'k', windowMs: 0 } }, /debounce\.windowMs must be a whole number from 1 to 2592000000, got 0/);
    await refused({ throttle: { key: 'k', windowMs: 2_592_000_001 } }, /throttle\.windowMs must be a whole number from 1 to 2592000000/);
    await refused({ debounce: { key: 'k', windowMs: 10, maxDelayMs: 5 } }, /debounce\.maxDelayMs must be at least windowMs \(10\), got 5/);
    await refused({ throttle: { key: '', windowMs: 10 } }, /throttle\.key must be 1 to 200 characters/);
    await refused({ throttle: { key: 'a\nb', windowMs: 10 } }, /throttle\.key must be 1 to 200 characters without control characters/);
    await refused({ debounce: { key: 'k', windowMs: 10, window: 5 } as never }, /debounce\.window/);
    await refused({ throttle: 'k' as never }, /throttle must be an object/);
    await expectRefused(
      () => h.store.jobEnqueueMany({ jobs: [{ name: 'n', payload: 1 }, { name: 'n', payload: 1, throttle: { key: 'k', windowMs: 1.5 } }] }),
      /jobs\[1\]\.throttle\.windowMs must be a whole number/,
    );
    expect(await h.snapshot()).toEqual(before);
  });

  it('issue 39 item 4: in a host transaction, a second debounce of the key finds the first; a rollback writes neither', async () => {
    const h = await ctx.open();
    if (!h.store.capabilities.transactionalEnqueue) {
      await expect(h.store.jobEnqueue({ job: debounced(1), manager: {} as never })).rejects.toThrow(/cannot join a TypeORM transaction/);
      return;
    }
    const ids = await h.hostTransaction!(async (manager) => [
      (await h.store.jobEnqueue({ job: debounced(1), manager })).id,
      (await h.store.jobEnqueue({ job: debounced(2), manager })).id,
      (await h.store.jobEnqueue({ job: throttled(1), manager })).id,
      (await h.store.jobEnqueue({ job: throttled(2), manager })).id,
    ]);
    expect(ids[1]).toBe(ids[0]);
    expect(ids[3]).toBe(ids[2]);
    expect(await mustGet(h.store, ids[0]!)).toMatchObject({ payload: { v: 2 } });
    await expect(
      h.hostTransaction!(async (manager) => {
        await h.store.jobEnqueue({ job: debounced(3, { debounce: { key: 'doc:9', windowMs: 1_000 } }), manager });
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    expect(await h.countJobs()).toBe(2);
  });
}
