import { expect, it } from '@jest/globals';
import type { JobStore, Outcome } from '../../../store/index.js';
import type { SuiteContext } from '../harness.js';
import { claimNone, claimOne, enqueue, expectRefused, LEASE_MS, mustGet } from './helpers.js';

const snooze = (jobId: string, attempt: number, delayMs: number): Outcome => ({ jobId, attempt, kind: 'snoozed', delayMs });
const report = (store: JobStore, workerId: string, outcome: Outcome) => store.jobCompleteMany({ workerId, outcomes: [outcome] });

/**
 * Snooze (issue 39 item 5, docs/snooze.md): a fenced outcome that reschedules the job after a
 * delay, with no error, and gives the attempt it used back to the budget by raising `maxAttempts`.
 * The attempt counter keeps counting, so `(workerId, attempt)` never names two runs.
 */
export function snoozeCases(ctx: SuiteContext): void {
  it('issue 39 item 5: reschedules the job after its delay with no error, counting the run and raising the budget by one', async () => {
    const h = await ctx.open();
    const id = await enqueue(h.store, { maxAttempts: 3 });
    await claimOne(h.store, 'w');
    expect(await report(h.store, 'w', snooze(id, 1, 60_000))).toEqual([{ jobId: id, attempt: 1, status: 'applied', state: 'scheduled' }]);
    const stored = await mustGet(h.store, id);
    expect(stored).toMatchObject({ state: 'scheduled', attempt: 1, maxAttempts: 4, snoozes: 1, lastError: null, workerId: null, leasedUntil: null, finishedAt: null });
    expect(stored.runAt.getTime() - stored.updatedAt.getTime()).toBe(60_000);
    // A real server's clock moves on between statements, so the check before the run time keeps a margin.
    await h.advance(55_000);
    await claimNone(h.store);
    await h.advance(5_000);
    expect(await claimOne(h.store, 'w')).toMatchObject({ id, attempt: 2, maxAttempts: 4, snoozes: 1 });
  });

  it('issue 39 item 5: snoozes never spend the budget: a one-attempt job snoozes twice and still fails once, then dead-letters', async () => {
    const h = await ctx.open();
    const id = await enqueue(h.store, { maxAttempts: 1 });
    for (const attempt of [1, 2]) {
      await claimOne(h.store, 'w');
      await report(h.store, 'w', snooze(id, attempt, 0));
    }
    expect(await claimOne(h.store, 'w')).toMatchObject({ id, attempt: 3, maxAttempts: 3, snoozes: 2 });
    await report(h.store, 'w', { jobId: id, attempt: 3, kind: 'failed', error: 'declined', retryDelayMs: 0 });
    expect(await mustGet(h.store, id)).toMatchObject({ state: 'dead_lettered', attempt: 3, lastError: 'declined' });
    const history = await h.store.jobHistory({ jobId: id });
    expect(history.map((e) => [e.state, e.attempt, e.error])).toEqual([
      ['scheduled', 0, null],
      ['running', 1, null],
      ['scheduled', 1, null],
      ['running', 2, null],
      ['scheduled', 2, null],
      ['running', 3, null],
      ['dead_lettered', 3, 'declined'],
    ]);
  });

  it('issue 39 item 5: a snooze after a failure clears the error and logs none', async () => {
    const h = await ctx.open();
    const id = await enqueue(h.store, { maxAttempts: 5 });
    await claimOne(h.store, 'w');
    await report(h.store, 'w', { jobId: id, attempt: 1, kind: 'failed', error: 'timeout', retryDelayMs: 0 });
    await claimOne(h.store, 'w');
    await report(h.store, 'w', snooze(id, 2, 0));
    expect(await mustGet(h.store, id)).toMatchObject({ state: 'scheduled', attempt: 2, maxAttempts: 6, snoozes: 1, lastError: null });
    expect((await h.store.jobHistory({ jobId: id })).slice(-2).map((e) => [e.state, e.attempt, e.error])).toEqual([
      ['running', 2, null],
      ['scheduled', 2, null],
    ]);
  });

  it('issue 39 item 5: a snooze from a worker without the live lease changes nothing', async () => {
    const h = await ctx.open();
    const id = await enqueue(h.store, { maxAttempts: 3 });
    await claimOne(h.store, 'w');
    const before = await mustGet(h.store, id);
    for (const [workerId, attempt] of [['other', 1], ['w', 2]] as const) {
      expect(await report(h.store, workerId, snooze(id, attempt, 0))).toEqual([{ jobId: id, attempt, status: 'stale' }]);
    }
    expect(await mustGet(h.store, id)).toEqual(before);
    // A snooze that arrives after its lease lapsed and another worker took the job is stale too.
    await h.advance(LEASE_MS);
    expect(await claimOne(h.store, 'w2')).toMatchObject({ id, attempt: 2 });
    expect(await report(h.store, 'w', snooze(id, 1, 0))).toEqual([{ jobId: id, attempt: 1, status: 'stale' }]);
    expect(await mustGet(h.store, id)).toMatchObject({ state: 'running', attempt: 2, workerId: 'w2', maxAttempts: 3, snoozes: 0 });
  });

  it('issue 39 item 5: a cancel request wins over a snooze: the job ends cancelled and its budget stays as it was', async () => {
    const h = await ctx.open();
    const id = await enqueue(h.store, { maxAttempts: 2 });
    await claimOne(h.store, 'w');
    await h.store.jobCancel({ jobId: id });
    expect(await report(h.store, 'w', snooze(id, 1, 1_000))).toEqual([{ jobId: id, attempt: 1, status: 'applied', state: 'cancelled' }]);
    const stored = await mustGet(h.store, id);
    expect(stored).toMatchObject({ state: 'cancelled', attempt: 1, maxAttempts: 2, snoozes: 0, lastError: null });
    expect(stored.finishedAt).not.toBeNull();
  });

  it('issue 39 item 5: a snooze frees its concurrency slot at once, and the snoozed job waits its turn behind the limit', async () => {
    const h = await ctx.open();
    await h.store.concurrencyLimitSet({ target: { key: 'tenant' }, max: 1 });
    const a = await enqueue(h.store, { concurrencyKey: 'tenant', payload: 1 });
    const b = await enqueue(h.store, { concurrencyKey: 'tenant', payload: 2 });
    expect((await claimOne(h.store, 'w')).id).toBe(a);
    await claimNone(h.store, 'w2');
    await report(h.store, 'w', snooze(a, 1, 5_000));
    expect((await claimOne(h.store, 'w2')).id).toBe(b);
    await h.advance(5_000);
    // a is due again, but b holds the key's one slot.
    await claimNone(h.store, 'w');
    await report(h.store, 'w2', { jobId: b, attempt: 1, kind: 'succeeded' });
    expect(await claimOne(h.store, 'w')).toMatchObject({ id: a, attempt: 2 });
  });

  it('issue 39 item 5: a replay takes back the budget the snoozes added, and their count', async () => {
    const h = await ctx.open();
    const id = await enqueue(h.store, { maxAttempts: 1 });
    await claimOne(h.store, 'w');
    await report(h.store, 'w', snooze(id, 1, 0));
    await claimOne(h.store, 'w');
    await report(h.store, 'w', { jobId: id, attempt: 2, kind: 'dead_lettered', error: 'gave up' });
    expect(await mustGet(h.store, id)).toMatchObject({ state: 'dead_lettered', attempt: 2, maxAttempts: 2, snoozes: 1 });
    expect(await h.store.jobReplay({ jobId: id })).toMatchObject({ state: 'scheduled', attempt: 0, maxAttempts: 1, snoozes: 0, lastError: null });
    expect(await claimOne(h.store, 'w')).toMatchObject({ id, attempt: 1, maxAttempts: 1, snoozes: 0 });
  });

  it('issue 39 item 5: snoozes and other outcomes in one write each apply on their own', async () => {
    const h = await ctx.open();
    const [a, b, c] = [await enqueue(h.store, { payload: 1 }), await enqueue(h.store, { payload: 2 }), await enqueue(h.store, { payload: 3 })];
    await h.store.jobClaim({ workerId: 'w', limit: 3, queues: ['default'], leaseMs: LEASE_MS });
    const results = await h.store.jobCompleteMany({
      workerId: 'w',
      outcomes: [snooze(a!, 1, 1_000), { jobId: b!, attempt: 1, kind: 'succeeded' }, snooze(c!, 1, 0)],
    });
    expect(results.map((r) => r.status === 'applied' && r.state)).toEqual(['scheduled', 'succeeded', 'scheduled']);
    expect((await mustGet(h.store, a!)).runAt.getTime() - (await mustGet(h.store, c!)).runAt.getTime()).toBe(1_000);
    expect((await mustGet(h.store, b!)).snoozes).toBe(0);
  });

  it('issue 39 item 5: a snooze written with a claim is due for a later claim, once', async () => {
    const h = await ctx.open();
    const id = await enqueue(h.store, { maxAttempts: 1 });
    await claimOne(h.store, 'w');
    const claim = { limit: 5, queues: ['default'], leaseMs: LEASE_MS, includeLapsed: true };
    const both = await h.store.jobCompleteAndClaim!({ workerId: 'w', outcomes: [snooze(id, 1, 0)], claim });
    expect(both.results).toEqual([{ jobId: id, attempt: 1, status: 'applied', state: 'scheduled' }]);
    const again = both.jobs.length > 0 ? both.jobs : await h.store.jobClaim({ workerId: 'w', ...claim });
    expect(again.map((j) => [j.id, j.attempt, j.maxAttempts, j.snoozes])).toEqual([[id, 2, 2, 1]]);
  });

  it('issue 39 item 5: a dependant waits through its parent\'s snooze; a snooze that ends in a cancel cascades to it', async () => {
    const h = await ctx.open();
    const parent = await enqueue(h.store, { id: '0190a5a0-0000-7000-8000-000000000901', payload: 'parent' });
    const child = await enqueue(h.store, { dependsOn: [parent], payload: 'child' });
    await claimOne(h.store, 'w');
    await report(h.store, 'w', snooze(parent, 1, 0));
    await h.store.jobSettleDependencies({ limit: 100 });
    expect(await mustGet(h.store, child)).toMatchObject({ state: 'awaiting_parents', pendingParents: 1 });
    expect(await claimOne(h.store, 'w')).toMatchObject({ id: parent, attempt: 2 });
    await h.store.jobCancel({ jobId: parent });
    await report(h.store, 'w', snooze(parent, 2, 0));
    while ((await h.store.jobSettleDependencies({ limit: 100 })) > 0);
    expect(await mustGet(h.store, parent)).toMatchObject({ state: 'cancelled', snoozes: 1 });
    expect(await mustGet(h.store, child)).toMatchObject({ state: 'cancelled' });
  });

  it('issue 39 item 5: a snooze of a minted occurrence leaves its schedule minting; the dead letter at the snooze limit halts it', async () => {
    const h = await ctx.open();
    const { schedule } = await h.store.scheduleUpsert({ schedule: { name: 'report.build', payload: {}, everyMs: 60_000, maxAttempts: 3 } });
    await h.advance(60_000);
    const [occurrence] = (await h.store.scheduleMintDue({ limit: 10 })).minted;
    await claimOne(h.store, 'w');
    await report(h.store, 'w', snooze(occurrence!.jobId, 1, 0));
    expect(await h.store.scheduleGet({ scheduleId: schedule.id })).toMatchObject({ state: 'active' });
    await claimOne(h.store, 'w');
    // The worker found the job at its handler's snooze limit and dead-lettered it.
    await report(h.store, 'w', { jobId: occurrence!.jobId, attempt: 2, kind: 'dead_lettered', error: 'asked to snooze again after 1 snooze' });
    expect(await h.store.scheduleGet({ scheduleId: schedule.id })).toMatchObject({ state: 'dead_lettered', haltedJobId: occurrence!.jobId });
  });

  it('issue 39 item 5: refuses a snooze with a bad delay before anything is written', async () => {
    const h = await ctx.open();
    const id = await enqueue(h.store);
    await claimOne(h.store, 'w');
    const before = await mustGet(h.store, id);
    for (const delayMs of [-1, Number.NaN, Number.POSITIVE_INFINITY, '5' as unknown as number]) {
      await expectRefused(() => report(h.store, 'w', snooze(id, 1, delayMs)), /^outcomes\[0\]\.delayMs must be a finite number of milliseconds at or above 0, got .+\.$/);
    }
    expect(await mustGet(h.store, id)).toEqual(before);
  });
}
