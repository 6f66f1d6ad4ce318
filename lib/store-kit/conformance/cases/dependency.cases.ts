import { expect, it } from '@jest/globals';
import { InvalidArgumentError } from '../../../core/index.js';
import type { JobStore } from '../../../store/index.js';
import type { SuiteContext } from '../harness.js';
import { claimNone, claimOne, enqueue, LEASE_MS, mustGet } from './helpers.js';

const id = (n: number) => `0190a5a0-0000-7000-8000-${String(n).padStart(12, '0')}`;

/** Claims `jobId` (it must be the next due job) and reports an outcome for it. */
async function finish(store: JobStore, jobId: string, kind: 'succeeded' | 'dead_lettered' | 'quarantined' = 'succeeded', output?: unknown) {
  const job = await claimOne(store, `w-${jobId.slice(-4)}`);
  expect(job.id).toBe(jobId);
  const outcome = kind === 'succeeded' ? { kind, output } : kind === 'quarantined' ? { kind, reason: 'bad' } : { kind, error: 'broken' };
  await store.jobCompleteMany({ workerId: `w-${jobId.slice(-4)}`, outcomes: [{ jobId, attempt: job.attempt, ...outcome } as never] });
}

/** Runs the store's dependency resolver until it has nothing left. */
async function settleAll(store: JobStore) {
  while ((await store.jobSettleDependencies({ limit: 500 })) > 0);
}

export function dependencyCases(ctx: SuiteContext): void {
  it('holds a dependant in awaiting_parents until every parent succeeds, each success lowering the latch once', async () => {
    const h = await ctx.open();
    const a = await enqueue(h.store, { id: id(1) });
    const b = await enqueue(h.store, { id: id(2) });
    const child = await enqueue(h.store, { id: id(3), dependsOn: [a, b], runAt: new Date(Date.UTC(2001, 0, 1)) });
    expect(await mustGet(h.store, child)).toMatchObject({ state: 'awaiting_parents', pendingParents: 2, dependencyMode: 'on_success' });
    await finish(h.store, a);
    expect(await mustGet(h.store, child)).toMatchObject({ state: 'awaiting_parents', pendingParents: 1 });
    await finish(h.store, b);
    await settleAll(h.store);
    const released = await mustGet(h.store, child);
    expect(released).toMatchObject({ state: 'scheduled', pendingParents: 0 });
    // Released no earlier than now, even though its own runAt was long past.
    expect(released.runAt.getTime()).toBe(released.updatedAt.getTime());
    expect((await claimOne(h.store)).id).toBe(child);
  });

  it('wires a chain inside one enqueueMany call by caller-chosen ids', async () => {
    const h = await ctx.open();
    await h.store.jobEnqueueMany({
      jobs: [
        { id: id(13), name: 'ship', payload: 3, dependsOn: [id(12)] },
        { id: id(11), name: 'reserve', payload: 1 },
        { id: id(12), name: 'charge', payload: 2, dependsOn: [id(11)] },
      ],
    });
    expect((await mustGet(h.store, id(12))).state).toBe('awaiting_parents');
    await finish(h.store, id(11));
    await settleAll(h.store);
    await finish(h.store, id(12));
    await settleAll(h.store);
    expect((await mustGet(h.store, id(13))).state).toBe('scheduled');
  });

  it.each<[string, (store: JobStore) => Promise<unknown>, RegExp]>([
    ['an unknown parent', (s) => s.jobEnqueue({ job: { name: 'x', payload: 1, dependsOn: [id(99)] } }), /depends on 0190a5a0-0000-7000-8000-000000000099, which does not exist\.$/],
    ['a job that depends on itself', (s) => s.jobEnqueue({ job: { id: id(5), name: 'x', payload: 1, dependsOn: [id(5)] } }), /^Job .* cannot depend on itself\.$/],
    [
      'a cycle inside a batch',
      (s) =>
        s.jobEnqueueMany({
          jobs: [
            { id: id(6), name: 'x', payload: 1, dependsOn: [id(7)] },
            { id: id(7), name: 'x', payload: 1, dependsOn: [id(6)] },
          ],
        }),
      /^dependsOn forms a cycle: .+ -> .+ -> .+\.$/,
    ],
    ['a parent named twice', (s) => s.jobEnqueue({ job: { name: 'x', payload: 1, dependsOn: [id(1), id(1)] } }), /names .* twice\.$/],
    ['a dependency mode without parents', (s) => s.jobEnqueue({ job: { name: 'x', payload: 1, dependencyMode: 'on_any_terminal' } }), /^dependencyMode needs dependsOn\.$/],
    ['an unknown dependency mode', (s) => s.jobEnqueue({ job: { name: 'x', payload: 1, dependsOn: [id(1)], dependencyMode: 'eventually' as never } }), /^dependencyMode must be/],
  ])('refuses %s before writing anything', async (_label, call, pattern) => {
    const h = await ctx.open();
    await enqueue(h.store, { id: id(1) });
    const before = await h.snapshot();
    const error = await call(h.store).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect((error as Error).message).toMatch(pattern);
    expect(await h.snapshot()).toEqual(before);
  });

  it('lowers a latch once even when the outcome is reported twice, or late by a worker that lost the lease', async () => {
    const h = await ctx.open();
    const parent = await enqueue(h.store, { id: id(21), maxAttempts: 3 });
    const child = await enqueue(h.store, { id: id(22), dependsOn: [parent] });
    const other = await enqueue(h.store, { id: id(23), dependsOn: [parent] });
    await claimOne(h.store, 'worker-a');
    await h.advance(LEASE_MS);
    const again = await claimOne(h.store, 'worker-b');
    expect(again.attempt).toBe(2);
    // The worker whose lease lapsed reports success: stale, so nothing moves.
    await h.store.jobCompleteMany({ workerId: 'worker-a', outcomes: [{ jobId: parent, attempt: 1, kind: 'succeeded' }] });
    await settleAll(h.store);
    expect(await mustGet(h.store, child)).toMatchObject({ state: 'awaiting_parents', pendingParents: 1 });
    // The live lease reports, twice.
    const report = { workerId: 'worker-b', outcomes: [{ jobId: parent, attempt: 2, kind: 'succeeded' as const }] };
    await h.store.jobCompleteMany(report);
    await h.store.jobCompleteMany(report);
    await settleAll(h.store);
    expect(await mustGet(h.store, child)).toMatchObject({ state: 'scheduled', pendingParents: 0 });
    expect(await mustGet(h.store, other)).toMatchObject({ state: 'scheduled', pendingParents: 0 });
  });

  it('on_success: a parent that fails for good cancels its dependants, and the cancel cascades', async () => {
    const h = await ctx.open();
    const parent = await enqueue(h.store, { id: id(31), maxAttempts: 1 });
    const child = await enqueue(h.store, { id: id(32), dependsOn: [parent] });
    const grandchild = await enqueue(h.store, { id: id(33), dependsOn: [child] });
    const tolerant = await enqueue(h.store, { id: id(34), dependsOn: [child], dependencyMode: 'on_any_terminal' });
    await finish(h.store, parent, 'dead_lettered');
    await settleAll(h.store);
    expect(await mustGet(h.store, child)).toMatchObject({ state: 'cancelled', lastError: `parent ${parent} ended dead_lettered` });
    expect(await mustGet(h.store, grandchild)).toMatchObject({ state: 'cancelled', lastError: `parent ${child} ended cancelled` });
    // on_any_terminal: any end releases it, a cancelled parent included.
    expect(await mustGet(h.store, tolerant)).toMatchObject({ state: 'scheduled', pendingParents: 0 });
  });

  it('cascades an operator cancel and a quarantine the same way', async () => {
    const h = await ctx.open();
    const cancelled = await enqueue(h.store, { id: id(41), delayMs: 60_000 });
    const quarantined = await enqueue(h.store, { id: id(42) });
    const a = await enqueue(h.store, { id: id(43), dependsOn: [cancelled] });
    const b = await enqueue(h.store, { id: id(44), dependsOn: [quarantined] });
    await h.store.jobCancel({ jobId: cancelled });
    await finish(h.store, quarantined, 'quarantined');
    await settleAll(h.store);
    expect((await mustGet(h.store, a)).state).toBe('cancelled');
    expect((await mustGet(h.store, b)).state).toBe('cancelled');
  });

  it('settles edges to parents that already finished when the dependant is written', async () => {
    const h = await ctx.open();
    const done = await enqueue(h.store, { id: id(51) });
    const dead = await enqueue(h.store, { id: id(52), maxAttempts: 1 });
    await finish(h.store, done);
    await finish(h.store, dead, 'dead_lettered');
    const ready = await enqueue(h.store, { id: id(53), dependsOn: [done] });
    const doomed = await enqueue(h.store, { id: id(54), dependsOn: [done, dead] });
    const tolerant = await enqueue(h.store, { id: id(55), dependsOn: [dead], dependencyMode: 'on_any_terminal' });
    expect(await mustGet(h.store, ready)).toMatchObject({ state: 'scheduled', pendingParents: 0 });
    expect(await mustGet(h.store, doomed)).toMatchObject({ state: 'cancelled', lastError: `parent ${dead} ended dead_lettered` });
    expect(await mustGet(h.store, tolerant)).toMatchObject({ state: 'scheduled' });
  });

  it('never lowers a latch twice for a parent that is replayed and finishes again', async () => {
    const h = await ctx.open();
    const parent = await enqueue(h.store, { id: id(61), maxAttempts: 1 });
    const sibling = await enqueue(h.store, { id: id(62), delayMs: 60_000 });
    const child = await enqueue(h.store, { id: id(63), dependsOn: [parent, sibling], dependencyMode: 'on_any_terminal' });
    await finish(h.store, parent, 'dead_lettered');
    await settleAll(h.store);
    expect((await mustGet(h.store, child)).pendingParents).toBe(1);
    await h.store.jobReplay({ jobId: parent });
    await finish(h.store, parent);
    await settleAll(h.store);
    expect(await mustGet(h.store, child)).toMatchObject({ state: 'awaiting_parents', pendingParents: 1 });
  });

  it('lets a dependant read its ancestors\' outputs, but not other jobs\' outputs; a stale report stores none', async () => {
    const h = await ctx.open();
    const stranger = await enqueue(h.store, { id: id(73) });
    const grandparent = await enqueue(h.store, { id: id(71) });
    const parent = await enqueue(h.store, { id: id(72), dependsOn: [grandparent] });
    const child = await enqueue(h.store, { id: id(74), dependsOn: [parent] });
    await finish(h.store, stranger, 'succeeded', { secret: true });
    await finish(h.store, grandparent, 'succeeded', { sku: 'A-1', reserved: 2 });
    await settleAll(h.store);
    // A stale report with output: refused, and its output is not stored.
    const job = await claimOne(h.store, 'slow');
    expect(job.id).toBe(parent);
    await h.advance(LEASE_MS);
    await h.store.jobCompleteMany({ workerId: 'slow', outcomes: [{ jobId: parent, attempt: 1, kind: 'succeeded', output: { stale: true } }] });
    expect((await mustGet(h.store, parent)).output).toBeNull();
    await finish(h.store, parent, 'succeeded', { chargeId: 'ch_1' });
    await settleAll(h.store);

    expect(await h.store.jobParentOutput({ jobId: child, ancestorId: parent })).toEqual({ found: true, output: { chargeId: 'ch_1' } });
    expect(await h.store.jobParentOutput({ jobId: child, ancestorId: grandparent })).toEqual({ found: true, output: { sku: 'A-1', reserved: 2 } });
    expect(await h.store.jobParentOutput({ jobId: child, ancestorId: stranger })).toEqual({ found: false, output: undefined });
    expect(await h.store.jobParentOutput({ jobId: parent, ancestorId: child })).toEqual({ found: false, output: undefined });
  });

  it('releases a fan-out of 1,200 dependants of one parent', async () => {
    const h = await ctx.open();
    const parent = await enqueue(h.store, { id: id(80) });
    for (let i = 0; i < 1_200; i += 400) {
      await h.store.jobEnqueueMany({ jobs: Array.from({ length: 400 }, (_, k) => ({ name: 'fan.out', payload: i + k, dependsOn: [parent] })) });
    }
    await finish(h.store, parent);
    await settleAll(h.store);
    const stats = await h.store.jobStats();
    expect(stats.counts).toEqual([
      { queue: 'default', state: 'scheduled', count: 1_200 },
      { queue: 'default', state: 'succeeded', count: 1 },
    ]);
    await claimNone(h.store, 'nobody', ['elsewhere']);
  });

  it('sends a wake-up hint when a parent\'s outcome releases a dependant, from a batch and from an attempt\'s own transaction', async () => {
    const h = await ctx.open();
    if (h.store.capabilities.wakeHints === 'none') return expect(h.store.capabilities.wakeHints).toBe('none');
    const hints: string[] = [];
    let heard!: () => void;
    const subscription = await h.store.subscribeWakeHints({
      listener: (queue) => {
        hints.push(queue);
        heard?.();
      },
    });
    const hintAfter = async (work: () => Promise<unknown>) => {
      hints.length = 0;
      const arrived = new Promise<void>((resolve) => (heard = resolve));
      await work();
      await arrived;
      return [...hints];
    };
    try {
      const first = await enqueue(h.store, { name: 'parent.a' });
      const second = await enqueue(h.store, { name: 'parent.b' });
      await enqueue(h.store, { name: 'child.a', queue: 'q-a', dependsOn: [first] });
      await enqueue(h.store, { name: 'child.b', queue: 'q-b', dependsOn: [second] });
      const a = await claimOne(h.store, 'w');
      expect(await hintAfter(() => h.store.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId: a.id, attempt: a.attempt, kind: 'succeeded' }] }))).toEqual(
        expect.arrayContaining([expect.stringMatching(/^(q-a|\*)$/)]),
      );
      if (!h.store.capabilities.attemptTransactions) return;
      const b = await claimOne(h.store, 'w');
      const tx = h.store.beginAttempt();
      await tx.run(() => tx.manager.query('SELECT 1'));
      expect(await hintAfter(() => tx.commitSuccess('w', b.id, b.attempt, null))).toEqual(expect.arrayContaining([expect.stringMatching(/^(q-b|\*)$/)]));
    } finally {
      await subscription.close();
    }
  });
}
