import { expect, it } from '@jest/globals';
import { ALL_PARENTS_SUCCEEDED, BatchNotFoundError, type JobRecord } from '../../../core/index.js';
import type { EnqueueBatchParams, EnqueueInput, JobStore } from '../../../store/index.js';
import type { SuiteContext } from '../harness.js';
import { enqueue, expectRefused, LEASE_MS, mustGet } from './helpers.js';

const job = (n: number, extra: Partial<EnqueueInput> = {}): EnqueueInput => ({ name: 'batch.item', payload: { n }, ...extra });
const callback = (name: string): EnqueueInput => ({ name, payload: { callback: name } });
const ALL_CALLBACKS = { onSuccess: callback('batch.succeeded'), onComplete: callback('batch.completed'), onFailure: callback('batch.failed') };

async function claimAll(store: JobStore, limit = 1_000): Promise<JobRecord[]> {
  return store.jobClaim({ workerId: 'w', limit, queues: ['default', 'other'], leaseMs: LEASE_MS });
}

async function report(store: JobStore, claimed: JobRecord, kind: 'succeeded' | 'dead_lettered') {
  const outcome = kind === 'succeeded' ? { kind } : { kind, error: 'broken for good' };
  const [result] = await store.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId: claimed.id, attempt: claimed.attempt, ...outcome } as never] });
  expect(result).toMatchObject({ status: 'applied' });
}

async function states(store: JobStore, ids: readonly (string | undefined)[]): Promise<string[]> {
  return Promise.all(ids.map(async (id) => (await mustGet(store, id!)).state));
}

/**
 * Batches: N jobs and up to three callback jobs that wait for all of them. Every release is
 * asserted before any maintenance sweep: the outcome write that ends the batch's last job releases
 * or cancels the callbacks itself.
 */
export function batchCases(ctx: SuiteContext): void {
  it('writes the jobs and callbacks in one call; the callbacks wait on every job of the batch', async () => {
    const h = await ctx.open();
    const result = await h.store.jobEnqueueBatch({ jobs: [job(1), job(2, { queue: 'other', priority: -1 }), job(3)], ...ALL_CALLBACKS });
    expect(result.jobs.map((r) => r.created)).toEqual([true, true, true]);
    expect(Object.keys(result.callbacks).sort()).toEqual(['onComplete', 'onFailure', 'onSuccess']);
    for (const r of result.jobs) {
      expect(await mustGet(h.store, r.id)).toMatchObject({ state: 'scheduled', batch: { id: result.batchId, callback: null } });
    }
    expect(await mustGet(h.store, result.callbacks.onSuccess!)).toMatchObject({ state: 'awaiting_parents', pendingParents: 3, dependencyMode: 'on_success', batch: { id: result.batchId, callback: 'success' } });
    expect(await mustGet(h.store, result.callbacks.onComplete!)).toMatchObject({ state: 'awaiting_parents', pendingParents: 3, dependencyMode: 'on_any_terminal', batch: { callback: 'complete' } });
    expect(await mustGet(h.store, result.callbacks.onFailure!)).toMatchObject({ state: 'awaiting_parents', pendingParents: 3, dependencyMode: 'on_failure', batch: { callback: 'failure' } });
    expect((await mustGet(h.store, await enqueue(h.store))).batch).toBeNull();
    const summary = await h.store.jobBatch({ batchId: result.batchId });
    expect(summary).toMatchObject({ id: result.batchId, total: 3, pending: 3, succeeded: 0, failed: 0, cancelled: 0, ended: false, failedJobIds: [] });
    expect(summary!.callbacks).toEqual([
      { kind: 'success', jobId: result.callbacks.onSuccess, state: 'awaiting_parents' },
      { kind: 'complete', jobId: result.callbacks.onComplete, state: 'awaiting_parents' },
      { kind: 'failure', jobId: result.callbacks.onFailure, state: 'awaiting_parents' },
    ]);
    expect(summary!.createdAt).toBeInstanceOf(Date);
  });

  it('when every job succeeds, the last outcome write releases onSuccess and onComplete and cancels onFailure', async () => {
    const h = await ctx.open();
    const { batchId, callbacks } = await h.store.jobEnqueueBatch({ jobs: [job(1), job(2)], ...ALL_CALLBACKS });
    const [first, second] = await claimAll(h.store);
    await report(h.store, first!, 'succeeded');
    expect(await states(h.store, [callbacks.onSuccess, callbacks.onComplete, callbacks.onFailure])).toEqual(['awaiting_parents', 'awaiting_parents', 'awaiting_parents']);
    expect(await mustGet(h.store, callbacks.onFailure!)).toMatchObject({ pendingParents: 1 });
    await report(h.store, second!, 'succeeded');
    expect(await states(h.store, [callbacks.onSuccess, callbacks.onComplete, callbacks.onFailure])).toEqual(['scheduled', 'scheduled', 'cancelled']);
    expect(await mustGet(h.store, callbacks.onFailure!)).toMatchObject({ lastError: ALL_PARENTS_SUCCEEDED });
    expect(await h.store.jobBatch({ batchId })).toMatchObject({ total: 2, pending: 0, succeeded: 2, failed: 0, ended: true });
    // Each released callback is claimed once, and runs like any job.
    const ran = await claimAll(h.store);
    expect(ran.map((j) => j.id).sort()).toEqual([callbacks.onSuccess, callbacks.onComplete].sort());
    for (const c of ran) await report(h.store, c, 'succeeded');
    expect(await claimAll(h.store)).toEqual([]);
  });

  it('a job that fails for good cancels onSuccess at once; onFailure and onComplete wait for the last job, with its failed ids', async () => {
    const h = await ctx.open();
    const { batchId, jobs, callbacks } = await h.store.jobEnqueueBatch({ jobs: [job(1), job(2), job(3)], ...ALL_CALLBACKS });
    const claimed = await claimAll(h.store);
    const byId = new Map(claimed.map((c) => [c.id, c]));
    await report(h.store, byId.get(jobs[1]!.id)!, 'dead_lettered');
    expect(await mustGet(h.store, callbacks.onSuccess!)).toMatchObject({ state: 'cancelled', lastError: `parent ${jobs[1]!.id} ended dead_lettered` });
    expect(await states(h.store, [callbacks.onComplete, callbacks.onFailure])).toEqual(['awaiting_parents', 'awaiting_parents']);
    await report(h.store, byId.get(jobs[0]!.id)!, 'succeeded');
    expect(await states(h.store, [callbacks.onComplete, callbacks.onFailure])).toEqual(['awaiting_parents', 'awaiting_parents']);
    await report(h.store, byId.get(jobs[2]!.id)!, 'succeeded');
    expect(await states(h.store, [callbacks.onComplete, callbacks.onFailure])).toEqual(['scheduled', 'scheduled']);
    expect(await mustGet(h.store, callbacks.onFailure!)).toMatchObject({ pendingParents: 0 });
    expect(await h.store.jobBatch({ batchId })).toMatchObject({ total: 3, pending: 0, succeeded: 2, failed: 1, cancelled: 0, ended: true, failedJobIds: [jobs[1]!.id] });
    expect(await h.store.jobBatch({ batchId, failedLimit: 0 })).toMatchObject({ failedJobIds: [] });
  });

  it('a job cancelled by an operator counts as not succeeded: onFailure runs', async () => {
    const h = await ctx.open();
    const { batchId, jobs, callbacks } = await h.store.jobEnqueueBatch({ jobs: [job(1), job(2)], onFailure: callback('batch.failed'), onComplete: callback('batch.completed') });
    await h.store.jobCancel({ jobId: jobs[0]!.id });
    const [left] = await claimAll(h.store);
    expect(left!.id).toBe(jobs[1]!.id);
    await report(h.store, left!, 'succeeded');
    expect(await states(h.store, [callbacks.onComplete, callbacks.onFailure])).toEqual(['scheduled', 'scheduled']);
    expect(await h.store.jobBatch({ batchId })).toMatchObject({ succeeded: 1, cancelled: 1, failed: 0, failedJobIds: [], ended: true });
  });

  it('dependencyMode on_failure works on any dependant, whatever its parents did before it was enqueued', async () => {
    const h = await ctx.open();
    const ok = await enqueue(h.store, { name: 'ok' });
    const bad = await enqueue(h.store, { name: 'bad' });
    const pending = await enqueue(h.store, { name: 'pending', delayMs: 3_600_000 });
    const claimed = await claimAll(h.store);
    const byName = new Map(claimed.map((c) => [c.name, c]));
    await report(h.store, byName.get('ok')!, 'succeeded');
    await report(h.store, byName.get('bad')!, 'dead_lettered');
    // Parents already ended: one failed releases it at once; all succeeded cancels it at once.
    const released = await enqueue(h.store, { name: 'cleanup', dependsOn: [ok, bad], dependencyMode: 'on_failure' });
    expect(await mustGet(h.store, released)).toMatchObject({ state: 'scheduled', pendingParents: 0 });
    const skipped = await enqueue(h.store, { name: 'cleanup', dependsOn: [ok], dependencyMode: 'on_failure' });
    expect(await mustGet(h.store, skipped)).toMatchObject({ state: 'cancelled', lastError: ALL_PARENTS_SUCCEEDED });
    // A failed parent is remembered until the last one ends, however that one ends.
    const waiting = await enqueue(h.store, { name: 'cleanup', dependsOn: [bad, pending], dependencyMode: 'on_failure' });
    expect(await mustGet(h.store, waiting)).toMatchObject({ state: 'awaiting_parents', pendingParents: 1 });
    await h.store.jobRunNow({ jobId: pending });
    const last = (await claimAll(h.store)).find((c) => c.id === pending);
    await report(h.store, last!, 'succeeded');
    expect(await mustGet(h.store, waiting)).toMatchObject({ state: 'scheduled', pendingParents: 0 });
  });

  it('an on_failure job cancelled because all parents succeeded cancels its own on_success dependants', async () => {
    const h = await ctx.open();
    const parent = await enqueue(h.store, { name: 'parent' });
    const cleanup = await enqueue(h.store, { name: 'cleanup', dependsOn: [parent], dependencyMode: 'on_failure' });
    const after = await enqueue(h.store, { name: 'after', dependsOn: [cleanup] });
    const tolerant = await enqueue(h.store, { name: 'tolerant', dependsOn: [cleanup], dependencyMode: 'on_any_terminal' });
    const [claimed] = await claimAll(h.store);
    await report(h.store, claimed!, 'succeeded');
    expect(await mustGet(h.store, cleanup)).toMatchObject({ state: 'cancelled', lastError: ALL_PARENTS_SUCCEEDED });
    expect(await mustGet(h.store, after)).toMatchObject({ state: 'cancelled', lastError: `parent ${cleanup} ended cancelled` });
    expect(await mustGet(h.store, tolerant)).toMatchObject({ state: 'scheduled' });
  });

  it('on_failure dependants past an outcome write\'s budget are decided by the maintenance sweep, as the write decides its own', async () => {
    const h = await ctx.open();
    const ok = await enqueue(h.store, { name: 'ok' });
    const bad = await enqueue(h.store, { name: 'bad' });
    // 1,010 dependants of each: more than one outcome write settles (1,000 edges and three per job it ends).
    const fanOut = (parent: string) => Array.from({ length: 1_010 }, (_, i) => ({ name: 'watch', payload: i, dependsOn: [parent], dependencyMode: 'on_failure' as const }));
    const watchingOk = (await h.store.jobEnqueueMany({ jobs: fanOut(ok) })).map((r) => r.id);
    const watchingBad = (await h.store.jobEnqueueMany({ jobs: fanOut(bad) })).map((r) => r.id);
    const claimed = await h.store.jobClaim({ workerId: 'w', limit: 10, queues: ['default'], leaseMs: LEASE_MS });
    const byName = new Map(claimed.map((c) => [c.name, c]));
    await report(h.store, byName.get('ok')!, 'succeeded');
    await report(h.store, byName.get('bad')!, 'dead_lettered');
    while ((await h.store.jobSettleDependencies({ limit: 500 })) > 0);
    for (const id of [watchingOk[0]!, watchingOk[1_009]!]) expect(await mustGet(h.store, id)).toMatchObject({ state: 'cancelled', lastError: ALL_PARENTS_SUCCEEDED });
    for (const id of [watchingBad[0]!, watchingBad[1_009]!]) expect(await mustGet(h.store, id)).toMatchObject({ state: 'scheduled', pendingParents: 0 });
    const stats = await h.store.jobStats();
    const count = (state: string) => stats.counts.filter((c) => c.state === state).reduce((sum, c) => sum + c.count, 0);
    expect(count('awaiting_parents')).toBe(0);
    expect(count('cancelled')).toBe(1_010);
  });

  it('an on_failure job in a sequence: the sequence edge is never a failure, its other parents decide', async () => {
    const h = await ctx.open();
    await enqueue(h.store, { name: 'first', sequence: { key: 'k' }, maxAttempts: 1 });
    const watched = await enqueue(h.store, { name: 'watched' });
    const cleanup = await enqueue(h.store, { name: 'cleanup', sequence: { key: 'k', afterFailure: 'continue' }, dependsOn: [watched], dependencyMode: 'on_failure' });
    expect(await mustGet(h.store, cleanup)).toMatchObject({ state: 'awaiting_parents', pendingParents: 2 });
    const claimed = await claimAll(h.store);
    const byName = new Map(claimed.map((c) => [c.name, c]));
    // The job before it in the sequence fails for good (the sequence goes on: continue); the watched job succeeds.
    await report(h.store, byName.get('first')!, 'dead_lettered');
    expect(await mustGet(h.store, cleanup)).toMatchObject({ state: 'awaiting_parents', pendingParents: 1 });
    await report(h.store, byName.get('watched')!, 'succeeded');
    expect(await mustGet(h.store, cleanup)).toMatchObject({ state: 'cancelled', lastError: ALL_PARENTS_SUCCEEDED });
    // And with the watched job failing, the same shape runs.
    await enqueue(h.store, { name: 'second', sequence: { key: 'k2' } });
    const broken = await enqueue(h.store, { name: 'broken' });
    const runs = await enqueue(h.store, { name: 'cleanup', sequence: { key: 'k2', afterFailure: 'continue' }, dependsOn: [broken], dependencyMode: 'on_failure' });
    const more = new Map((await claimAll(h.store)).map((c) => [c.name, c]));
    await report(h.store, more.get('broken')!, 'dead_lettered');
    await report(h.store, more.get('second')!, 'succeeded');
    expect(await mustGet(h.store, runs)).toMatchObject({ state: 'scheduled', pendingParents: 0 });
  });

  it('a batch of 1,000 jobs: one write of 999 outcomes settles its 2,997 edges itself, and the last outcome releases the callbacks', async () => {
    const h = await ctx.open();
    const jobs = Array.from({ length: 1_000 }, (_, i) => job(i));
    const { batchId, callbacks } = await h.store.jobEnqueueBatch({ jobs, ...ALL_CALLBACKS });
    const claimed = await claimAll(h.store);
    expect(claimed).toHaveLength(1_000);
    const last = claimed.pop()!;
    const outcomes = claimed.map((c, i) => (i % 100 === 0 ? { jobId: c.id, attempt: c.attempt, kind: 'dead_lettered' as const, error: 'no' } : { jobId: c.id, attempt: c.attempt, kind: 'succeeded' as const }));
    await h.store.jobCompleteMany({ workerId: 'w', outcomes });
    expect(await mustGet(h.store, callbacks.onComplete!)).toMatchObject({ state: 'awaiting_parents', pendingParents: 1 });
    expect(await mustGet(h.store, callbacks.onFailure!)).toMatchObject({ state: 'awaiting_parents', pendingParents: 1 });
    expect((await mustGet(h.store, callbacks.onSuccess!)).state).toBe('cancelled');
    await report(h.store, last, 'succeeded');
    expect(await mustGet(h.store, callbacks.onComplete!)).toMatchObject({ state: 'scheduled', pendingParents: 0 });
    expect(await mustGet(h.store, callbacks.onFailure!)).toMatchObject({ state: 'scheduled', pendingParents: 0 });
    const summary = await h.store.jobBatch({ batchId });
    expect(summary).toMatchObject({ total: 1_000, succeeded: 990, failed: 10, ended: true });
    expect(summary!.failedJobIds).toEqual([...summary!.failedJobIds].sort());
    expect(summary!.failedJobIds).toHaveLength(10);
  });

  it('refuses a bad batch with one sentence before anything is written', async () => {
    const h = await ctx.open();
    const before = await h.snapshot();
    const refusals: [EnqueueBatchParams, RegExp][] = [
      [{ jobs: [], onComplete: callback('c') }, /^enqueueBatch needs at least one job/],
      [{ jobs: [job(1)] }, /^enqueueBatch needs a callback/],
      [{ jobs: 'x' as never, onComplete: callback('c') }, /^enqueueBatch needs an array of jobs\.$/],
      [{ jobs: [job(1, { id: '0190a5a1-0000-7000-8000-000000000001' })], onComplete: callback('c') }, /^jobs\[0\]\.id is not allowed on a job of a batch/],
      [{ jobs: [job(1), job(2, { uniqueKey: 'k' })], onComplete: callback('c') }, /^jobs\[1\]\.uniqueKey is not allowed on a job of a batch/],
      [{ jobs: [job(1, { debounce: { key: 'k', windowMs: 1_000 } })], onComplete: callback('c') }, /^jobs\[0\]\.debounce is not allowed/],
      [{ jobs: [job(1)], onFailure: { ...callback('c'), dependsOn: [] } }, /^onFailure\.dependsOn is not allowed on a batch callback/],
      [{ jobs: [job(1)], onSuccess: { ...callback('c'), sequence: { key: 'k' } } }, /^onSuccess\.sequence is not allowed on a batch callback/],
      [{ jobs: [job(1), { name: '', payload: 1 }], onComplete: callback('c') }, /^jobs\[1\]\.name/],
      [{ jobs: [job(1)], onComplete: { name: 'c', payload: undefined as never } }, /payload/],
      [{ jobs: [job(1)], onDone: callback('c') } as never, /onDone/],
      [{ jobs: Array.from({ length: 10_001 }, (_, i) => job(i)), onComplete: callback('c') }, /^enqueueBatch takes at most 10000 jobs, got 10001/],
    ];
    for (const [params, pattern] of refusals) await expectRefused(() => h.store.jobEnqueueBatch(params), pattern);
    expect(await h.snapshot()).toEqual(before);
  });

  it('lists batches newest first in pages, and reads none for an unknown id', async () => {
    const h = await ctx.open();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await h.store.jobEnqueueBatch({ jobs: [job(i), job(i + 10)], onComplete: callback('c') })).batchId);
    await enqueue(h.store);
    const page = await h.store.jobListBatches({ limit: 2 });
    expect(page.map((b) => b.id)).toEqual([ids[2], ids[1]]);
    expect(page[0]).toMatchObject({ total: 2, pending: 2, failedJobIds: [] });
    expect((await h.store.jobListBatches({ limit: 2, before: ids[1] })).map((b) => b.id)).toEqual([ids[0]]);
    expect((await h.store.jobListBatches()).map((b) => b.id)).toEqual([...ids].reverse());
    expect(await h.store.jobBatch({ batchId: '0190a5a1-0000-7000-8000-000000000009' })).toBeNull();
    await expectRefused(() => h.store.jobBatch({ batchId: 'nope' }), /batchId/);
    await expectRefused(() => h.store.jobBatch({ batchId: ids[0]!, failedLimit: 10_001 }), /^failedLimit must be a whole number from 0 to 10000/);
    await expectRefused(() => h.store.jobListBatches({ limit: 0 }), /^limit must be a whole number from 1 to 200/);
  });

  it('cancels a batch as a whole: callbacks first, waiting jobs at once, running ones asked to stop; no callback runs', async () => {
    const h = await ctx.open();
    const { batchId, jobs, callbacks } = await h.store.jobEnqueueBatch({ jobs: [job(1), job(2), job(3)], ...ALL_CALLBACKS });
    const [running] = await h.store.jobClaim({ workerId: 'w', limit: 1, queues: ['default'], leaseMs: LEASE_MS });
    const other = await enqueue(h.store);
    const result = await h.store.jobCancelBatch({ batchId, actor: 'ops' });
    expect(result).toEqual({ cancelled: 5, cancelRequested: 1 });
    expect(await states(h.store, [callbacks.onSuccess, callbacks.onComplete, callbacks.onFailure])).toEqual(['cancelled', 'cancelled', 'cancelled']);
    expect(await mustGet(h.store, running!.id)).toMatchObject({ state: 'running', cancelRequested: true });
    expect(await states(h.store, jobs.filter((j) => j.id !== running!.id).map((j) => j.id))).toEqual(['cancelled', 'cancelled']);
    expect((await mustGet(h.store, other)).state).toBe('scheduled');
    const audit = await h.store.auditList({ limit: 20 });
    expect(audit.filter((entry) => entry.action === 'job.cancel' && entry.actor === 'ops')).toHaveLength(6);
    // Asking again changes nothing it already asked for.
    expect(await h.store.jobCancelBatch({ batchId })).toEqual({ cancelled: 0, cancelRequested: 0 });
    await expectRefused(() => h.store.jobCancelBatch({ batchId: 'x' }), /batchId/);
    await expectRefused(() => h.store.jobCancelBatch({ batchId: '0190a5a1-0000-7000-8000-000000000009' }), /^No batch with id 0190a5a1-0000-7000-8000-000000000009 exists\.$/, BatchNotFoundError);
  });

  it('a callback runs once: replaying a failed job after the batch ended does not run it again', async () => {
    const h = await ctx.open();
    const { jobs, callbacks } = await h.store.jobEnqueueBatch({ jobs: [job(1)], onComplete: callback('batch.completed'), onFailure: callback('batch.failed') });
    const [only] = await claimAll(h.store);
    await report(h.store, only!, 'dead_lettered');
    const released = await claimAll(h.store);
    expect(released.map((j) => j.id).sort()).toEqual([callbacks.onComplete, callbacks.onFailure].sort());
    for (const c of released) await report(h.store, c, 'succeeded');
    await h.store.jobReplay({ jobId: jobs[0]!.id });
    const [again] = await claimAll(h.store);
    expect(again!.id).toBe(jobs[0]!.id);
    await report(h.store, again!, 'succeeded');
    expect(await claimAll(h.store)).toEqual([]);
    expect(await states(h.store, [callbacks.onComplete, callbacks.onFailure])).toEqual(['succeeded', 'succeeded']);
  });

  it('under the lean finish, the jobs of a batch are kept, so its counts hold', async () => {
    const h = await ctx.open({ finish: 'lean' });
    const { batchId } = await h.store.jobEnqueueBatch({ jobs: [job(1), job(2)], onComplete: callback('c') });
    for (const c of await claimAll(h.store)) await report(h.store, c, 'succeeded');
    expect(await h.store.jobBatch({ batchId })).toMatchObject({ total: 2, succeeded: 2, ended: true });
  });
}
