import { expect, it } from '@jest/globals';
import { IllegalTransitionError, JobNotFoundError } from '../../../core/index.js';
import { LATEST_SCHEMA_VERSION, type JobStore } from '../../../store/index.js';
import type { SuiteContext } from '../harness.js';
import { claimNone, claimOne, enqueue, LEASE_MS, mustGet } from './helpers.js';

const MISSING = '0190a5a0-0000-7000-8000-00000000f00d';

async function deadLetter(store: JobStore, error: string, queue = 'default'): Promise<string> {
  const id = await enqueue(store, { maxAttempts: 1, queue });
  const job = await claimOne(store, 'w', [queue]);
  expect(job.id).toBe(id);
  await store.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId: id, attempt: 1, kind: 'failed', error, retryDelayMs: 0 }] });
  return id;
}

export function operatorCases(ctx: SuiteContext): void {
  it('replays a dead-lettered job: attempt 0, error cleared, due now', async () => {
    const h = await ctx.open();
    const id = await deadLetter(h.store, 'broken');
    await h.advance(5_000);
    const replayed = await h.store.jobReplay({ jobId: id });
    expect(replayed).toMatchObject({ id, state: 'scheduled', attempt: 0, lastError: null, workerId: null, finishedAt: null, output: null });
    expect(replayed.runAt.getTime()).toBe(replayed.updatedAt.getTime());
    expect(await mustGet(h.store, id)).toEqual(replayed);
    expect(await claimOne(h.store)).toMatchObject({ id, attempt: 1 });
  });

  it('replays a quarantined job', async () => {
    const h = await ctx.open();
    const id = await enqueue(h.store);
    await claimOne(h.store, 'w');
    await h.store.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId: id, attempt: 1, kind: 'quarantined', reason: 'bad payload' }] });
    expect(await h.store.jobReplay({ jobId: id })).toMatchObject({ state: 'scheduled', attempt: 0, lastError: null });
  });

  it('refuses to replay a job that is not dead-lettered or quarantined, or does not exist, changing nothing', async () => {
    const h = await ctx.open();
    const scheduled = await enqueue(h.store);
    const before = await h.snapshot();
    await expect(h.store.jobReplay({ jobId: scheduled })).rejects.toBeInstanceOf(IllegalTransitionError);
    await expect(h.store.jobReplay({ jobId: scheduled })).rejects.toThrow(`Job ${scheduled} is scheduled; only dead-lettered or quarantined jobs can be replayed.`);
    await expect(h.store.jobReplay({ jobId: MISSING })).rejects.toBeInstanceOf(JobNotFoundError);
    expect(await h.snapshot()).toEqual(before);
  });

  it('cancels a waiting job at once, and a second cancel changes nothing', async () => {
    const h = await ctx.open();
    const id = await enqueue(h.store, { delayMs: 60_000 });
    const first = await h.store.jobCancel({ jobId: id });
    expect(first.outcome).toBe('cancelled');
    expect(first.job).toMatchObject({ state: 'cancelled', leasedUntil: null });
    expect(first.job.finishedAt).not.toBeNull();
    // The second cancel is audited as an operator action, but the job does not change.
    const before = ((await h.snapshot()) as { jobs: unknown }).jobs;
    expect((await h.store.jobCancel({ jobId: id })).outcome).toBe('already_cancelled');
    expect(((await h.snapshot()) as { jobs: unknown }).jobs).toEqual(before);
    await h.advance(60_000);
    await claimNone(h.store);
  });

  it('asks a running job to stop: the heartbeat flags it and its failure ends it cancelled', async () => {
    const h = await ctx.open();
    const id = await enqueue(h.store, { maxAttempts: 5 });
    await claimOne(h.store, 'w');
    const requested = await h.store.jobCancel({ jobId: id });
    expect(requested.outcome).toBe('cancel_requested');
    expect(requested.job).toMatchObject({ state: 'running', cancelRequested: true, workerId: 'w' });
    expect((await h.store.jobCancel({ jobId: id })).outcome).toBe('already_requested');

    const beat = await h.store.jobHeartbeat({ workerId: 'w', leases: [{ jobId: id, attempt: 1 }], leaseMs: LEASE_MS });
    expect(beat.renewed).toEqual([expect.objectContaining({ jobId: id, attempt: 1, cancelRequested: true })]);

    await h.store.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId: id, attempt: 1, kind: 'failed', error: 'aborted', retryDelayMs: 1_000 }] });
    expect(await mustGet(h.store, id)).toMatchObject({ state: 'cancelled', lastError: 'aborted', attempt: 1 });
  });

  it('records a success that arrives after a cancel request as succeeded', async () => {
    const h = await ctx.open();
    const id = await enqueue(h.store);
    await claimOne(h.store, 'w');
    await h.store.jobCancel({ jobId: id });
    await h.store.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId: id, attempt: 1, kind: 'succeeded', output: 'done' }] });
    expect(await mustGet(h.store, id)).toMatchObject({ state: 'succeeded', output: 'done' });
  });

  it('never reclaims a cancel-requested job whose lease lapsed; the sweep cancels it', async () => {
    const h = await ctx.open();
    const id = await enqueue(h.store, { maxAttempts: 5 });
    await claimOne(h.store, 'w');
    await h.store.jobCancel({ jobId: id });
    await h.advance(LEASE_MS);
    await claimNone(h.store, 'other');
    expect(await h.store.jobExpireLeases({ limit: 10 })).toEqual([{ jobId: id, attempt: 1, state: 'cancelled' }]);
    expect(await mustGet(h.store, id)).toMatchObject({ state: 'cancelled', lastError: 'lease expired' });
  });

  it('cancels on relinquish or quarantine of a cancel-requested attempt', async () => {
    const h = await ctx.open();
    const relinquished = await enqueue(h.store, { maxAttempts: 5 });
    const quarantined = await enqueue(h.store, { maxAttempts: 5 });
    await h.store.jobClaim({ workerId: 'w', limit: 2, queues: ['default'], leaseMs: LEASE_MS });
    await h.store.jobCancel({ jobId: relinquished });
    await h.store.jobCancel({ jobId: quarantined });
    expect(await h.store.jobRelinquishMany({ workerId: 'w', leases: [{ jobId: relinquished, attempt: 1 }] })).toEqual([
      { jobId: relinquished, attempt: 1, status: 'applied', state: 'cancelled' },
    ]);
    expect(await h.store.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId: quarantined, attempt: 1, kind: 'quarantined', reason: 'x' }] })).toEqual([
      { jobId: quarantined, attempt: 1, status: 'applied', state: 'cancelled' },
    ]);
  });

  it('refuses to cancel a job that succeeded, or does not exist, changing nothing', async () => {
    const h = await ctx.open();
    const done = await enqueue(h.store);
    await claimOne(h.store, 'w');
    await h.store.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId: done, attempt: 1, kind: 'succeeded' }] });
    const before = await h.snapshot();
    await expect(h.store.jobCancel({ jobId: done })).rejects.toThrow(`Job ${done} already ended as succeeded and cannot be cancelled.`);
    await expect(h.store.jobCancel({ jobId: done })).rejects.toBeInstanceOf(IllegalTransitionError);
    await expect(h.store.jobCancel({ jobId: MISSING })).rejects.toBeInstanceOf(JobNotFoundError);
    expect(await h.snapshot()).toEqual(before);
  });

  it('lists dead-lettered jobs most recently dead-lettered first, up to the limit', async () => {
    const h = await ctx.open();
    const first = await deadLetter(h.store, 'one');
    await h.advance(1_000);
    const second = await deadLetter(h.store, 'two');
    await h.advance(1_000);
    const third = await deadLetter(h.store, 'three');
    // Replaying and dead-lettering the first again makes it the most recent.
    await h.advance(1_000);
    await h.store.jobReplay({ jobId: first });
    await claimOne(h.store, 'w');
    await h.store.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId: first, attempt: 1, kind: 'dead_lettered', error: 'again' }] });
    await enqueue(h.store);

    const all = await h.store.jobListDeadLettered();
    expect(all.map((j) => j.id)).toEqual([first, third, second]);
    expect(all.map((j) => j.lastError)).toEqual(['again', 'three', 'two']);
    expect((await h.store.jobListDeadLettered({ limit: 2 })).map((j) => j.id)).toEqual([first, third]);
  });

  it('counts jobs per queue and state, reports the oldest due job, and the schema version', async () => {
    const h = await ctx.open();
    expect(await h.store.schemaVersion()).toBe(LATEST_SCHEMA_VERSION);
    const empty = await h.store.jobStats();
    expect(empty).toMatchObject({ counts: [], oldestDueAt: null });
    const first = await enqueue(h.store, { queue: 'mail' });
    await h.advance(1_000);
    await enqueue(h.store, { queue: 'mail' });
    await enqueue(h.store, { queue: 'mail', delayMs: 60_000 });
    await enqueue(h.store);
    await claimOne(h.store, 'w');
    const stats = await h.store.jobStats();
    expect(stats.counts).toEqual([
      { queue: 'default', state: 'running', count: 1 },
      { queue: 'mail', state: 'scheduled', count: 3 },
    ]);
    expect(stats.oldestDueAt!.getTime()).toBe((await mustGet(h.store, first)).runAt.getTime());
    expect(stats.now.getTime() - stats.oldestDueAt!.getTime()).toBeGreaterThanOrEqual(1_000);
  });

  it('issue 19 item 15: lists queues by name with their pause state and job counts, a queue paused before its first job included', async () => {
    const h = await ctx.open();
    expect(await h.store.queueList()).toEqual([]);
    await enqueue(h.store, { queue: 'mail' });
    await enqueue(h.store, { queue: 'mail' });
    await enqueue(h.store);
    await claimOne(h.store, 'w');
    await h.store.queuePause({ queue: 'mail' });
    await h.store.queuePause({ queue: 'reports' }); // ahead of its first job
    await h.store.queuePause({ queue: 'later' });
    await h.store.queueResume({ queue: 'later' });
    expect(await h.store.queueList()).toEqual([
      { name: 'default', paused: false, counts: { running: 1 } },
      { name: 'later', paused: false, counts: {} },
      { name: 'mail', paused: true, counts: { scheduled: 2 } },
      { name: 'reports', paused: true, counts: {} },
    ]);
    await h.store.queueResume({ queue: 'mail' });
    expect((await h.store.queueList()).find((q) => q.name === 'mail')).toEqual({ name: 'mail', paused: false, counts: { scheduled: 2 } });
  });

  it('lists jobs newest first, filtered by state, queue and name', async () => {
    const h = await ctx.open();
    const a = await enqueue(h.store, { name: 'alpha' });
    const b = await enqueue(h.store, { name: 'beta', queue: 'mail' });
    const c = await enqueue(h.store, { name: 'alpha', queue: 'mail' });
    await claimOne(h.store, 'w', ['default']);
    expect((await h.store.jobList()).map((j) => j.id)).toEqual([c, b, a]);
    expect((await h.store.jobList({ state: 'running' })).map((j) => j.id)).toEqual([a]);
    expect((await h.store.jobList({ queue: 'mail' })).map((j) => j.id)).toEqual([c, b]);
    expect((await h.store.jobList({ name: 'alpha' })).map((j) => j.id)).toEqual([c, a]);
    expect((await h.store.jobList({ name: 'alpha', queue: 'mail', state: 'scheduled' })).map((j) => j.id)).toEqual([c]);
    expect((await h.store.jobList({ limit: 1 })).map((j) => j.id)).toEqual([c]);
    expect(await h.store.jobGet({ jobId: MISSING })).toBeNull();
  });
}
