import { expect, it } from '@jest/globals';
import { IllegalTransitionError } from '../../../core/index.js';
import type { EnqueueInput, JobStore } from '../../../store/index.js';
import type { SuiteContext } from '../harness.js';
import { claimNone, claimOne, enqueue, expectRefused, LEASE_MS, mustGet } from './helpers.js';

const DAY = 86_400_000;
const id = (n: number) => `0190a5a1-0000-7000-8000-${String(n).padStart(12, '0')}`;

function inSequence(key: string, extra: Partial<EnqueueInput> = {}): Partial<EnqueueInput> {
  return { sequence: { key }, ...extra };
}

/** Reports an outcome for a job this worker claimed. */
async function report(store: JobStore, jobId: string, attempt: number, kind: 'succeeded' | 'dead_lettered' = 'succeeded') {
  const outcome = kind === 'succeeded' ? { kind } : { kind, error: 'broken for good' };
  const [result] = await store.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId, attempt, ...outcome } as never] });
  expect(result).toMatchObject({ status: 'applied' });
}

/** Claims the next due job, which must be `jobId`, and reports its outcome. */
async function finish(store: JobStore, jobId: string, kind: 'succeeded' | 'dead_lettered' = 'succeeded') {
  const job = await claimOne(store, 'w');
  expect(job.id).toBe(jobId);
  await report(store, jobId, job.attempt, kind);
}

async function claimAll(store: JobStore): Promise<string[]> {
  return (await store.jobClaim({ workerId: 'w', limit: 50, queues: ['default', 'other'], leaseMs: LEASE_MS })).map((job) => job.id);
}

async function settleAll(store: JobStore) {
  while ((await store.jobSettleDependencies({ limit: 500 })) > 0);
}

/**
 * Sequences: jobs with one sequence key run one at a time, in enqueue order, across wire names and
 * queues. Every release is asserted before any maintenance sweep: the outcome write that ends a
 * job releases the next one itself.
 */
export function sequenceCases(ctx: SuiteContext): void {
  it('runs the jobs of a sequence one at a time, in enqueue order, beside other sequences', async () => {
    const h = await ctx.open();
    const a = await enqueue(h.store, inSequence('acct-1', { name: 'acct.open' }));
    const b = await enqueue(h.store, inSequence('acct-1', { name: 'acct.deposit', queue: 'other' }));
    const c = await enqueue(h.store, inSequence('acct-1', { name: 'acct.close' }));
    const other = await enqueue(h.store, inSequence('acct-2'));
    const plain = await enqueue(h.store);
    expect(await mustGet(h.store, a)).toMatchObject({ state: 'scheduled', sequence: { key: 'acct-1', afterFailure: 'block' } });
    expect(await mustGet(h.store, b)).toMatchObject({ state: 'awaiting_parents', pendingParents: 1, dependencyMode: null });
    expect((await mustGet(h.store, plain)).sequence).toBeNull();
    expect((await claimAll(h.store)).sort()).toEqual([a, other, plain].sort());
    await report(h.store, a, 1);
    expect(await mustGet(h.store, b)).toMatchObject({ state: 'scheduled', pendingParents: 0 });
    expect(await mustGet(h.store, c)).toMatchObject({ state: 'awaiting_parents' });
    expect(await claimAll(h.store)).toEqual([b]);
    await report(h.store, b, 1);
    expect(await claimAll(h.store)).toEqual([c]);
    await report(h.store, c, 1);
    // A job whose predecessor already finished starts due.
    const d = await enqueue(h.store, inSequence('acct-1'));
    expect(await mustGet(h.store, d)).toMatchObject({ state: 'scheduled', pendingParents: 0 });
  });

  it('chains the jobs of one enqueueMany in batch order, each key behind its stored tail', async () => {
    const h = await ctx.open();
    const tail = await enqueue(h.store, inSequence('k1'));
    const [x1, y1, x2, x3] = [id(1), id(2), id(3), id(4)];
    await h.store.jobEnqueueMany({
      jobs: [
        { id: x1, name: 'n', payload: 1, sequence: { key: 'k1' } },
        { id: y1, name: 'n', payload: 2, sequence: { key: 'k2' } },
        { id: x2, name: 'n', payload: 3, sequence: { key: 'k1' } },
        { id: x3, name: 'n', payload: 4, sequence: { key: 'k1' } },
      ],
    });
    expect((await claimAll(h.store)).sort()).toEqual([tail, y1].sort());
    for (const [done, next] of [[tail, x1], [x1, x2], [x2, x3]] as const) {
      await report(h.store, done, 1);
      expect(await claimAll(h.store)).toEqual([next]);
    }
    expect((await h.store.jobEdges({ jobId: x3 }))!.parents).toEqual([expect.objectContaining({ id: x2, settled: true, satisfied: true, sequence: 'block' })]);
  });

  it('holds the sequence behind a dead letter, through the sweep, until the dead letter is replayed and succeeds', async () => {
    const h = await ctx.open();
    const a = await enqueue(h.store, inSequence('k', { maxAttempts: 1 }));
    const b = await enqueue(h.store, inSequence('k'));
    await finish(h.store, a, 'dead_lettered');
    await settleAll(h.store);
    expect(await mustGet(h.store, b)).toMatchObject({ state: 'awaiting_parents', pendingParents: 1 });
    await claimNone(h.store);
    const blocked = await h.store.jobListBlockedSequences();
    expect(blocked).toEqual([{ key: 'k', job: expect.objectContaining({ id: a, state: 'dead_lettered', lastError: 'broken for good' }), nextJobId: b }]);
    expect((await h.store.jobEdges({ jobId: a }))!.dependants).toEqual([expect.objectContaining({ id: b, settled: false, satisfied: false, sequence: 'block' })]);
    // A job enqueued now waits behind the blocked one.
    const c = await enqueue(h.store, inSequence('k'));
    expect(await mustGet(h.store, c)).toMatchObject({ state: 'awaiting_parents' });

    await h.store.jobReplay({ jobId: a });
    expect(await mustGet(h.store, b)).toMatchObject({ state: 'awaiting_parents' });
    expect(await h.store.jobListBlockedSequences()).toEqual([]);
    await finish(h.store, a);
    expect(await mustGet(h.store, b)).toMatchObject({ state: 'scheduled' });
    expect((await h.store.jobEdges({ jobId: b }))!.parents).toEqual([expect.objectContaining({ id: a, settled: true, satisfied: true, sequence: 'block' })]);
  });

  it('releases the sequence when its dead letter is discarded, and a quarantined job holds it the same way', async () => {
    const h = await ctx.open();
    const a = await enqueue(h.store, inSequence('k', { maxAttempts: 1 }));
    const b = await enqueue(h.store, inSequence('k'));
    await finish(h.store, a, 'dead_lettered');
    await h.store.jobCancel({ jobId: a });
    expect(await mustGet(h.store, b)).toMatchObject({ state: 'scheduled', pendingParents: 0 });
    expect(await h.store.jobListBlockedSequences()).toEqual([]);
    await finish(h.store, b);

    const q = await enqueue(h.store, inSequence('q'));
    const behind = await enqueue(h.store, inSequence('q'));
    const job = await claimOne(h.store, 'w');
    expect(job.id).toBe(q);
    await h.store.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId: q, attempt: job.attempt, kind: 'quarantined', reason: 'no handler' }] });
    expect(await mustGet(h.store, behind)).toMatchObject({ state: 'awaiting_parents' });
    expect((await h.store.jobListBlockedSequences()).map((s) => [s.key, s.job.id, s.nextJobId])).toEqual([['q', q, behind]]);
    await h.store.jobCancel({ jobId: q });
    expect(await mustGet(h.store, behind)).toMatchObject({ state: 'scheduled' });
  });

  it("runs past a failure when the next job's afterFailure is continue", async () => {
    const h = await ctx.open();
    const a = await enqueue(h.store, inSequence('k', { maxAttempts: 1 }));
    const b = await enqueue(h.store, { sequence: { key: 'k', afterFailure: 'continue' } });
    expect(await mustGet(h.store, b)).toMatchObject({ sequence: { key: 'k', afterFailure: 'continue' } });
    await finish(h.store, a, 'dead_lettered');
    expect(await mustGet(h.store, b)).toMatchObject({ state: 'scheduled' });
    expect(await h.store.jobListBlockedSequences()).toEqual([]);
    await finish(h.store, b);
    // Enqueued behind a tail that already failed: continue starts due, block waits.
    const c = await enqueue(h.store, inSequence('k2', { maxAttempts: 1 }));
    await finish(h.store, c, 'dead_lettered');
    const goes = await enqueue(h.store, { sequence: { key: 'k2', afterFailure: 'continue' } });
    expect(await mustGet(h.store, goes)).toMatchObject({ state: 'scheduled', pendingParents: 0 });
    await finish(h.store, goes);
    const d = await enqueue(h.store, inSequence('k3', { maxAttempts: 1 }));
    await finish(h.store, d, 'dead_lettered');
    const held = await enqueue(h.store, inSequence('k3'));
    expect(await mustGet(h.store, held)).toMatchObject({ state: 'awaiting_parents', pendingParents: 1 });
    expect((await h.store.jobListBlockedSequences()).map((s) => [s.key, s.job.id, s.nextJobId])).toEqual([['k3', d, held]]);
  });

  it('refuses to replay a dead letter its sequence went on past, and writes nothing', async () => {
    const h = await ctx.open();
    const a = await enqueue(h.store, inSequence('k', { maxAttempts: 1 }));
    const b = await enqueue(h.store, { sequence: { key: 'k', afterFailure: 'continue' } });
    await finish(h.store, a, 'dead_lettered');
    const running = await claimOne(h.store, 'w');
    expect(running.id).toBe(b);
    const before = await h.snapshot();
    await expectRefused(
      () => h.store.jobReplay({ jobId: a }),
      new RegExp(`^Job ${a} cannot be replayed: sequence "k" went on past it \\(the job after it ran with afterFailure "continue"\\), so it would run out of order; enqueue a new job into the sequence instead\\.$`),
      IllegalTransitionError,
    );
    expect(await h.snapshot()).toEqual(before);
    // Discarding it is still allowed.
    expect((await h.store.jobCancel({ jobId: a })).job.state).toBe('cancelled');
  });

  it('lists a sequence held by a failure whose next job was cancelled in line, with that job', async () => {
    const h = await ctx.open();
    const a = await enqueue(h.store, inSequence('k', { maxAttempts: 1 }));
    const b = await enqueue(h.store, inSequence('k'));
    const c = await enqueue(h.store, inSequence('k'));
    const job = await claimOne(h.store, 'w');
    await h.store.jobCancel({ jobId: b });
    await report(h.store, a, job.attempt, 'dead_lettered');
    expect(await mustGet(h.store, c)).toMatchObject({ state: 'awaiting_parents' });
    expect((await h.store.jobListBlockedSequences()).map((s) => [s.key, s.job.id, s.nextJobId])).toEqual([['k', a, b]]);
  });

  it('keeps a job cancelled before its turn in line: the next one still waits for the job before it', async () => {
    const h = await ctx.open();
    const a = await enqueue(h.store, inSequence('k'));
    const b = await enqueue(h.store, inSequence('k'));
    const c = await enqueue(h.store, inSequence('k'));
    const running = await claimOne(h.store, 'w');
    expect(running.id).toBe(a);
    expect((await h.store.jobCancel({ jobId: b })).job.state).toBe('cancelled');
    expect(await mustGet(h.store, c)).toMatchObject({ state: 'awaiting_parents' });
    // The tail cancelled too, and a job enqueued behind it: it waits for its turn as well.
    await h.store.jobCancel({ jobId: c });
    const d = await enqueue(h.store, inSequence('k'));
    expect(await mustGet(h.store, d)).toMatchObject({ state: 'awaiting_parents' });
    await settleAll(h.store);
    await claimNone(h.store);
    await report(h.store, a, running.attempt);
    expect(await mustGet(h.store, d)).toMatchObject({ state: 'scheduled' });
    expect(await claimAll(h.store)).toEqual([d]);
  });

  it('keeps a job that its failed parent cancels at enqueue in line behind its predecessor', async () => {
    const h = await ctx.open();
    const failed = await enqueue(h.store, { name: 'parent', maxAttempts: 1, queue: 'other' });
    const parentJob = (await h.store.jobClaim({ workerId: 'w', limit: 1, queues: ['other'], leaseMs: LEASE_MS }))[0]!;
    await report(h.store, failed, parentJob.attempt, 'dead_lettered');
    const a = await enqueue(h.store, inSequence('k'));
    const b = await enqueue(h.store, inSequence('k', { dependsOn: [failed] }));
    expect(await mustGet(h.store, b)).toMatchObject({ state: 'cancelled', lastError: `parent ${failed} ended dead_lettered` });
    const c = await enqueue(h.store, inSequence('k'));
    expect(await mustGet(h.store, c)).toMatchObject({ state: 'awaiting_parents' });
    const job = await claimOne(h.store, 'w');
    expect(job.id).toBe(a);
    await claimNone(h.store);
    await report(h.store, a, job.attempt);
    expect(await mustGet(h.store, c)).toMatchObject({ state: 'scheduled' });
  });

  it('appends nothing for a job whose caller-chosen id is already stored', async () => {
    const h = await ctx.open();
    const a = await enqueue(h.store, inSequence('k', { id: id(21) }));
    const b = await enqueue(h.store, inSequence('k'));
    expect(await h.store.jobEnqueue({ job: { id: id(21), name: 'test.job', payload: 1, sequence: { key: 'k' } } })).toMatchObject({ id: a, created: false });
    const c = await enqueue(h.store, inSequence('k'));
    expect((await h.store.jobEdges({ jobId: c }))!.parents.map((p) => p.id)).toEqual([b]);
  });

  it('starts the sequence afresh once retention deleted its last job', async () => {
    const h = await ctx.open();
    const a = await enqueue(h.store, inSequence('k'));
    await finish(h.store, a);
    await h.advance(2 * DAY);
    expect(await h.store.jobPurge({ olderThanMs: DAY, limit: 100 })).toBe(1);
    expect(await h.store.jobGet({ jobId: a })).toBeNull();
    const b = await enqueue(h.store, inSequence('k'));
    expect(await mustGet(h.store, b)).toMatchObject({ state: 'scheduled', pendingParents: 0 });
    expect((await h.store.jobEdges({ jobId: b }))!.parents).toEqual([]);
  });

  it('keeps from retention a dead letter that holds its sequence, and a job cancelled in line behind it', async () => {
    const h = await ctx.open();
    const a = await enqueue(h.store, inSequence('k', { maxAttempts: 1 }));
    const b = await enqueue(h.store, inSequence('k'));
    await finish(h.store, a, 'dead_lettered');
    await h.store.jobCancel({ jobId: b });
    await h.advance(2 * DAY);
    await h.store.jobPurge({ olderThanMs: DAY, limit: 100 });
    expect(await mustGet(h.store, a)).toMatchObject({ state: 'dead_lettered' });
    // The cancelled tail is still in line: deleting it would start the sequence afresh past the dead letter.
    expect(await mustGet(h.store, b)).toMatchObject({ state: 'cancelled' });
    const c = await enqueue(h.store, inSequence('k'));
    expect(await mustGet(h.store, c)).toMatchObject({ state: 'awaiting_parents' });
    await h.store.jobCancel({ jobId: a });
    expect(await mustGet(h.store, c)).toMatchObject({ state: 'scheduled' });
  });

  it('keeps a sequence job that succeeds under the lean finish, so the next one finds its place', async () => {
    const h = await ctx.open({ finish: 'lean' });
    const a = await enqueue(h.store, inSequence('k'));
    const job = await claimOne(h.store, 'w');
    const b = await enqueue(h.store, inSequence('k'));
    await report(h.store, a, job.attempt);
    expect(await mustGet(h.store, a)).toMatchObject({ state: 'succeeded' });
    expect(await mustGet(h.store, b)).toMatchObject({ state: 'scheduled' });
    await finish(h.store, b);
    expect(await mustGet(h.store, b)).toMatchObject({ state: 'succeeded' });
  });

  it('leaves the tail as it was when a host transaction that enqueued into the sequence rolls back', async () => {
    const h = await ctx.open();
    if (!h.hostTransaction) return expect(h.store.capabilities.transactionalEnqueue).toBe(false);
    const a = await enqueue(h.store, inSequence('k'));
    await expect(
      h.hostTransaction(async (manager) => {
        await h.store.jobEnqueue({ job: { name: 'test.job', payload: 1, sequence: { key: 'k' } }, manager });
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    const c = await enqueue(h.store, inSequence('k'));
    expect((await h.store.jobEdges({ jobId: c }))!.parents.map((p) => p.id)).toEqual([a]);
    const committed = await h.hostTransaction((manager) => h.store.jobEnqueue({ job: { name: 'test.job', payload: 2, sequence: { key: 'k' } }, manager }));
    expect((await h.store.jobEdges({ jobId: committed.id }))!.parents.map((p) => p.id)).toEqual([c]);
  });

  it('lists blocked sequences a page at a time in key order, one row per key', async () => {
    const h = await ctx.open();
    const heads: Record<string, string> = {};
    const next: Record<string, string> = {};
    for (const key of ['c', 'a', 'b']) {
      heads[key] = await enqueue(h.store, inSequence(key, { maxAttempts: 1 }));
      next[key] = await enqueue(h.store, inSequence(key));
    }
    for (let i = 0; i < 3; i++) {
      const job = await claimOne(h.store, 'w');
      await report(h.store, job.id, job.attempt, 'dead_lettered');
    }
    expect((await h.store.jobListBlockedSequences()).map((s) => [s.key, s.job.id, s.nextJobId])).toEqual(
      ['a', 'b', 'c'].map((key) => [key, heads[key], next[key]]),
    );
    expect((await h.store.jobListBlockedSequences({ limit: 2 })).map((s) => s.key)).toEqual(['a', 'b']);
    expect((await h.store.jobListBlockedSequences({ limit: 2, after: 'b' })).map((s) => s.key)).toEqual(['c']);
  });

  it.each<[string, Partial<EnqueueInput>, RegExp]>([
    ['a key of the wrong type', { sequence: { key: 7 as never } }, /^sequence\.key must be 1 to 200 characters without control characters, got 7\.$/],
    ['an empty key', { sequence: { key: '' } }, /^sequence\.key must be 1 to 200 characters/],
    ['a key with a control character', { sequence: { key: 'a\u0007b' } }, /^sequence\.key must be 1 to 200 characters without control characters/],
    ['a key too long', { sequence: { key: 'k'.repeat(201) } }, /^sequence\.key must be 1 to 200 characters/],
    ['an unknown afterFailure', { sequence: { key: 'k', afterFailure: 'skip' as never } }, /^sequence\.afterFailure must be "block" or "continue", got "skip"\.$/],
    ['a misspelt option', { sequence: { key: 'k', afterfailure: 'continue' } as never }, /afterfailure/],
    ['a sequence that is not an object', { sequence: 'k' as never }, /^sequence must be an object/],
    ['a unique key beside it', { sequence: { key: 'k' }, uniqueKey: 'u' }, /^sequence cannot be combined with uniqueKey/],
    ['a debounce beside it', { sequence: { key: 'k' }, debounce: { key: 'd', windowMs: 1_000 } }, /^sequence cannot be combined with debounce/],
    ['a throttle beside it', { sequence: { key: 'k' }, throttle: { key: 't', windowMs: 1_000 } }, /^sequence cannot be combined with throttle/],
  ])('refuses %s before anything is written', async (_label, input, pattern) => {
    const h = await ctx.open();
    await enqueue(h.store, inSequence('k'));
    const before = await h.snapshot();
    await expectRefused(() => h.store.jobEnqueue({ job: { name: 'test.job', payload: 1, ...input } }), pattern);
    expect(await h.snapshot()).toEqual(before);
  });

  it('refuses a batch whose dependsOn points back along its own sequence, and moves no tail', async () => {
    const h = await ctx.open();
    const tail = await enqueue(h.store, inSequence('k'));
    await expectRefused(
      () =>
        h.store.jobEnqueueMany({
          jobs: [
            { id: id(31), name: 'n', payload: 1, sequence: { key: 'k' }, dependsOn: [id(32)] },
            { id: id(32), name: 'n', payload: 2, sequence: { key: 'k' } },
          ],
        }),
      /^dependsOn forms a cycle/,
    );
    const next = await enqueue(h.store, inSequence('k'));
    expect((await h.store.jobEdges({ jobId: next }))!.parents.map((p) => p.id)).toEqual([tail]);
  });
}
