import { expect, it } from '@jest/globals';
import { InvalidArgumentError, JobFailedError, JobNotFoundError } from '../../../core/index.js';
import { JOB_STATUS_BATCH } from '../../../store/index.js';
import { JobWaiter, type JobWaitResult, type Timers } from '../../../worker/index.js';
import type { SuiteContext } from '../harness.js';
import { claimOne, enqueue, expectRefused, LEASE_MS } from './helpers.js';

const MISSING = '0190a5a0-0000-7000-8000-00000000f00d';

/** Poll timers that never fire: each read is one the case asks for (`pollOnce`). */
class PollTimers implements Timers {
  private readonly pending = new Map<number, () => void>();
  private next = 1;
  setTimeout(callback: () => void): unknown {
    this.pending.set(this.next, callback);
    return this.next++;
  }
  clearTimeout(handle: unknown): void {
    this.pending.delete(handle as number);
  }
  defer(callback: () => void): void {
    void Promise.resolve().then(callback);
  }
  get size(): number {
    return this.pending.size;
  }
}

/** The promise's outcome so far, without waiting for it. */
function track<T>(promise: Promise<T>): { readonly value?: T; readonly error?: unknown; readonly settled: boolean } {
  const state: { value?: T; error?: unknown; settled: boolean } = { settled: false };
  promise.then(
    (value) => Object.assign(state, { value, settled: true }),
    (error: unknown) => Object.assign(state, { error, settled: true }),
  );
  return state;
}

export function jobWaitCases(ctx: SuiteContext): void {
  it('reads where many jobs stand in one call, with their queue and keys, leaving out ids with no job, without payloads', async () => {
    const h = await ctx.open();
    const done = await enqueue(h.store, { queue: 'a', uniqueKey: 'once ☃' });
    const dead = await enqueue(h.store, { queue: 'b', maxAttempts: 1 });
    const waiting = await enqueue(h.store, { queue: 'c', concurrencyKey: 'tenant ☃' });
    await claimOne(h.store, 'worker-a', ['a']);
    await claimOne(h.store, 'worker-a', ['b']);
    await h.store.jobCompleteMany({
      workerId: 'worker-a',
      outcomes: [
        { jobId: done, attempt: 1, kind: 'succeeded', output: { total: 42 } },
        { jobId: dead, attempt: 1, kind: 'failed', error: 'boom', retryDelayMs: 0 },
      ],
    });
    const statuses = await h.store.jobStatusMany({ jobIds: [done, dead.toUpperCase(), waiting, MISSING, done] });
    const byId = new Map(statuses.map((status) => [status.id, status]));
    expect(statuses).toHaveLength(3);
    expect(byId.get(done)).toEqual({ id: done, queue: 'a', concurrencyKey: null, uniqueKey: 'once ☃', scheduleId: null, scheduledFor: expect.any(Date), state: 'succeeded', attempt: 1, maxAttempts: 10, lastError: null, output: { total: 42 }, finishedAt: expect.any(Date) });
    expect(byId.get(dead)).toEqual({ id: dead, queue: 'b', concurrencyKey: null, uniqueKey: null, scheduleId: null, scheduledFor: expect.any(Date), state: 'dead_lettered', attempt: 1, maxAttempts: 1, lastError: 'boom', output: null, finishedAt: expect.any(Date) });
    expect(byId.get(waiting)).toEqual({ id: waiting, queue: 'c', concurrencyKey: 'tenant ☃', uniqueKey: null, scheduleId: null, scheduledFor: expect.any(Date), state: 'scheduled', attempt: 0, maxAttempts: 10, lastError: null, output: null, finishedAt: null });
    expect(byId.get(done)!.finishedAt!.getTime()).toBe((await h.store.jobGet({ jobId: done }))!.finishedAt!.getTime());
    expect(byId.get(waiting)!.scheduledFor.getTime()).toBe((await h.store.jobGet({ jobId: waiting }))!.scheduledFor.getTime());
    expect(await h.store.jobStatusMany({ jobIds: [] })).toEqual([]);
  });

  it('refuses a status read of bad ids or more than a batch, before reading', async () => {
    const h = await ctx.open();
    await expectRefused(() => h.store.jobStatusMany({ jobIds: 'x' as never }), /^jobIds must be an array of job ids\.$/);
    await expectRefused(() => h.store.jobStatusMany({ jobIds: [MISSING, 'nope'] }), /^jobIds\[1\] must be a UUID, got "nope"\.$/);
    const tooMany = Array.from({ length: JOB_STATUS_BATCH + 1 }, () => MISSING);
    await expectRefused(() => h.store.jobStatusMany({ jobIds: tooMany }), /^jobIds may hold at most 1000 ids, got 1001\.$/);
    await expect(h.store.jobStatusMany(undefined as never)).rejects.toThrow(InvalidArgumentError);
  });

  it('waitFor resolves with the output once another worker reports success, and not before', async () => {
    const h = await ctx.open();
    const timers = new PollTimers();
    const waiter = new JobWaiter({ store: h.store, timers });
    const id = await enqueue(h.store);
    const wait = track(waiter.waitFor(id));
    await waiter.pollOnce();
    await claimOne(h.store);
    await waiter.pollOnce();
    expect(wait.settled).toBe(false);
    await h.store.jobCompleteMany({ workerId: 'worker-a', outcomes: [{ jobId: id, attempt: 1, kind: 'succeeded', output: ['ok'] }] });
    await waiter.pollOnce();
    expect(wait.value).toEqual({ jobId: id, state: 'succeeded', output: ['ok'], attempt: 1, finishedAt: expect.any(Date) });
    expect((wait.value as JobWaitResult).finishedAt).toEqual((await h.store.jobGet({ jobId: id }))!.finishedAt);
    expect(waiter.pending).toBe(0);
    expect(timers.size).toBe(0);
  });

  it('waitFor outlives a worker whose lease lapsed: the stale report is refused and the retry elsewhere decides', async () => {
    const h = await ctx.open();
    const timers = new PollTimers();
    const waiter = new JobWaiter({ store: h.store, timers });
    const id = await enqueue(h.store);
    await claimOne(h.store, 'worker-a');
    const wait = track(waiter.waitFor(id));
    await h.advance(LEASE_MS + 1);
    expect(await claimOne(h.store, 'worker-b')).toMatchObject({ id, attempt: 2 });
    const [stale] = await h.store.jobCompleteMany({ workerId: 'worker-a', outcomes: [{ jobId: id, attempt: 1, kind: 'succeeded', output: 'from a' }] });
    expect(stale).toMatchObject({ status: 'stale' });
    await waiter.pollOnce();
    expect(wait.settled).toBe(false);
    await h.store.jobCompleteMany({ workerId: 'worker-b', outcomes: [{ jobId: id, attempt: 2, kind: 'succeeded', output: 'from b' }] });
    await waiter.pollOnce();
    expect(wait.value).toMatchObject({ jobId: id, output: 'from b', attempt: 2 });
  });

  it('waitFor rejects with the last error once a job is dead-lettered, cancelled or quarantined, and for an unknown id', async () => {
    const h = await ctx.open();
    const timers = new PollTimers();
    const waiter = new JobWaiter({ store: h.store, timers });
    const dead = await enqueue(h.store, { queue: 'd', maxAttempts: 1 });
    const quarantined = await enqueue(h.store, { queue: 'q' });
    const cancelled = await enqueue(h.store, { queue: 'c', delayMs: 60_000 });
    await claimOne(h.store, 'worker-a', ['d']);
    await claimOne(h.store, 'worker-a', ['q']);
    await h.store.jobCompleteMany({
      workerId: 'worker-a',
      outcomes: [
        { jobId: dead, attempt: 1, kind: 'failed', error: 'card declined', retryDelayMs: 0 },
        { jobId: quarantined, attempt: 1, kind: 'quarantined', reason: 'no handler for test.job' },
      ],
    });
    await h.store.jobCancel({ jobId: cancelled });
    const results = await Promise.allSettled([dead, quarantined, cancelled, MISSING].map((id) => waiter.waitFor(id)));
    const errors = results.map((result) => (result.status === 'rejected' ? (result.reason as Error) : undefined));
    expect(errors[0]).toBeInstanceOf(JobFailedError);
    expect(errors[0]).toMatchObject({ jobId: dead, state: 'dead_lettered', lastError: 'card declined', attempt: 1 });
    expect(errors[0]!.message).toBe(`Job ${dead} ended dead_lettered after 1 attempt; its last error is on lastError.`);
    expect(errors[1]).toMatchObject({ jobId: quarantined, state: 'quarantined', lastError: 'no handler for test.job' });
    expect(errors[2]).toMatchObject({ jobId: cancelled, state: 'cancelled' });
    expect(errors[3]).toBeInstanceOf(JobNotFoundError);
    expect(timers.size).toBe(0);
  });

  it('issue 36 item 4: under the lean finish waitFor resolves as succeeded, without output, when a job it saw unfinished is deleted by its success; one it never saw is not found', async () => {
    const h = await ctx.open({ finish: 'lean' });
    const timers = new PollTimers();
    const waiter = new JobWaiter({ store: h.store, timers });
    const seenWaiting = await enqueue(h.store, { queue: 'w' });
    const seenRunning = await enqueue(h.store, { queue: 'r', maxAttempts: 3 });
    const unseen = await enqueue(h.store, { queue: 'u' });
    await claimOne(h.store, 'worker-a', ['r']);
    await h.store.jobCompleteMany({ workerId: 'worker-a', outcomes: [{ jobId: seenRunning, attempt: 1, kind: 'failed', error: 'retry', retryDelayMs: 0 }] });
    await claimOne(h.store, 'worker-a', ['r']);
    const waits = [seenWaiting, seenRunning].map((id) => track(waiter.waitFor(id)));
    await waiter.pollOnce();
    expect(waits.map((w) => w.settled)).toEqual([false, false]);
    // Both succeed; a store under lean deletes them, so the next read finds neither.
    await claimOne(h.store, 'worker-a', ['w']);
    await h.store.jobCompleteMany({
      workerId: 'worker-a',
      outcomes: [
        { jobId: seenWaiting, attempt: 1, kind: 'succeeded' },
        { jobId: seenRunning, attempt: 2, kind: 'succeeded' },
      ],
    });
    expect(await h.store.jobStatusMany({ jobIds: [seenWaiting, seenRunning] })).toEqual([]);
    await waiter.pollOnce();
    expect(waits[0]!.value).toEqual({ jobId: seenWaiting, state: 'succeeded', output: null, attempt: 1, finishedAt: null });
    expect(waits[1]!.value).toEqual({ jobId: seenRunning, state: 'succeeded', output: null, attempt: 2, finishedAt: null });
    // A job that was gone before the wait's first read cannot be told from an unknown id.
    await claimOne(h.store, 'worker-a', ['u']);
    await h.store.jobCompleteMany({ workerId: 'worker-a', outcomes: [{ jobId: unseen, attempt: 1, kind: 'succeeded' }] });
    await expect(waiter.waitFor(unseen)).rejects.toBeInstanceOf(JobNotFoundError);
    expect(waiter.pending).toBe(0);
    expect(timers.size).toBe(0);
  });

  it('issue 36 item 4: under keep a job that a wait saw unfinished and then cannot find is not found', async () => {
    const h = await ctx.open();
    const timers = new PollTimers();
    const store = { jobStatusMany: h.store.jobStatusMany.bind(h.store), finish: h.store.finish };
    let hide = false;
    const waiter = new JobWaiter({ store: { ...store, jobStatusMany: async (params) => (hide ? [] : store.jobStatusMany(params)) }, timers });
    const id = await enqueue(h.store);
    const wait = waiter.waitFor(id);
    await waiter.pollOnce();
    hide = true;
    await waiter.pollOnce();
    await expect(wait).rejects.toBeInstanceOf(JobNotFoundError);
  });
}
