import { expect, it } from '@jest/globals';
import { InvalidArgumentError } from '../../../core/index.js';
import type { SuiteContext } from '../harness.js';
import { claimOne, enqueue, LEASE_MS, mustGet } from './helpers.js';

export function historyCases(ctx: SuiteContext): void {
  it('appends every state change to the job\'s history, with the errors it set', async () => {
    const h = await ctx.open();
    const id = await enqueue(h.store, { name: 'billing.charge', maxAttempts: 3 });
    await claimOne(h.store, 'w');
    await h.store.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId: id, attempt: 1, kind: 'failed', error: 'card declined', retryDelayMs: 0 }] });
    await claimOne(h.store, 'w');
    await h.advance(LEASE_MS);
    await claimOne(h.store, 'w2');
    await h.store.jobCompleteMany({ workerId: 'w2', outcomes: [{ jobId: id, attempt: 3, kind: 'succeeded' }] });
    const history = await h.store.jobHistory({ jobId: id });
    expect(history.map((e) => [e.state, e.attempt, e.error])).toEqual([
      ['scheduled', 0, null],
      ['running', 1, null],
      ['scheduled', 1, 'card declined'],
      ['running', 2, null],
      ['running', 3, 'lease expired'],
      ['succeeded', 3, null],
    ]);
    expect(history.every((e) => e.jobId === id && e.name === 'billing.charge')).toBe(true);
    const ids = history.map((e) => e.id);
    expect([...ids].sort((a, b) => a - b)).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('issue 19 item 5: every failure transition carries its error, also when it repeats the previous attempt\'s', async () => {
    const h = await ctx.open();
    const declined = await enqueue(h.store, { name: 'billing.charge', maxAttempts: 3 });
    for (let attempt = 1; attempt <= 3; attempt++) {
      await claimOne(h.store, 'w');
      await h.store.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId: declined, attempt, kind: 'failed', error: 'card declined', retryDelayMs: 0 }] });
    }
    expect((await h.store.jobHistory({ jobId: declined })).map((e) => [e.state, e.attempt, e.error])).toEqual([
      ['scheduled', 0, null],
      ['running', 1, null],
      ['scheduled', 1, 'card declined'],
      ['running', 2, null],
      ['scheduled', 2, 'card declined'],
      ['running', 3, null],
      ['dead_lettered', 3, 'card declined'],
    ]);
    // What observers are fed is the same entry: the dead letter reaches them with its error.
    const fed = (await h.store.historyRead({ limit: 100 })).filter((e) => e.jobId === declined && e.state === 'dead_lettered');
    expect(fed.map((e) => e.error)).toEqual(['card declined']);

    // Two lapses in a row: the reclaim and the sweep each say why the attempt ended.
    const lapsing = await enqueue(h.store, { maxAttempts: 2 });
    await claimOne(h.store, 'w');
    await h.advance(LEASE_MS);
    await claimOne(h.store, 'w2');
    await h.advance(LEASE_MS);
    await h.store.jobExpireLeases({ limit: 10 });
    expect((await h.store.jobHistory({ jobId: lapsing })).map((e) => [e.state, e.attempt, e.error]).slice(2)).toEqual([
      ['running', 2, 'lease expired'],
      ['dead_lettered', 2, 'lease expired'],
    ]);

    // A quarantine and a cancel that repeat the previous failure's text carry it too, and a
    // relinquished attempt says it was relinquished rather than repeating an older failure.
    const quarantined = await enqueue(h.store, { maxAttempts: 3 });
    const cancelled = await enqueue(h.store, { maxAttempts: 3 });
    const relinquished = await enqueue(h.store, { maxAttempts: 3 });
    await h.store.jobClaim({ workerId: 'w', limit: 3, queues: ['default'], leaseMs: LEASE_MS });
    const fail = (jobId: string, attempt: number) => ({ jobId, attempt, kind: 'failed' as const, error: 'no decoder', retryDelayMs: 0 });
    await h.store.jobCompleteMany({ workerId: 'w', outcomes: [fail(quarantined, 1), fail(cancelled, 1), fail(relinquished, 1)] });
    await h.store.jobClaim({ workerId: 'w', limit: 3, queues: ['default'], leaseMs: LEASE_MS });
    await h.store.jobCancel({ jobId: cancelled });
    await h.store.jobCompleteMany({
      workerId: 'w',
      outcomes: [{ jobId: quarantined, attempt: 2, kind: 'quarantined', reason: 'no decoder' }, fail(cancelled, 2)],
    });
    await h.store.jobRelinquishMany({ workerId: 'w', leases: [{ jobId: relinquished, attempt: 2 }] });
    const last = async (jobId: string) => (await h.store.jobHistory({ jobId })).at(-1)!;
    expect(await last(quarantined)).toMatchObject({ state: 'quarantined', attempt: 2, error: 'no decoder' });
    expect(await last(cancelled)).toMatchObject({ state: 'cancelled', attempt: 2, error: 'no decoder' });
    expect(await last(relinquished)).toMatchObject({ state: 'scheduled', attempt: 2, error: 'lease relinquished' });
    expect(await mustGet(h.store, relinquished)).toMatchObject({ state: 'scheduled', lastError: 'lease relinquished' });
  });

  it('keeps no error text under the transitions policy, and nothing under off', async () => {
    for (const [policy, expected] of [
      ['transitions', [['scheduled', null], ['running', null], ['dead_lettered', null]]],
      ['off', []],
    ] as const) {
      const h = await ctx.open({ historyPolicy: policy });
      const id = await enqueue(h.store, { maxAttempts: 1 });
      await claimOne(h.store, 'w');
      await h.store.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId: id, attempt: 1, kind: 'failed', error: 'secret detail', retryDelayMs: 0 }] });
      expect((await h.store.jobHistory({ jobId: id })).map((e) => [e.state, e.error])).toEqual(expected);
    }
  });

  it('reads the whole log in delivery order from any position it handed out, which is what observers are fed', async () => {
    const h = await ctx.open();
    const a = await enqueue(h.store, { name: 'a' });
    const b = await enqueue(h.store, { name: 'b' });
    await h.store.jobCancel({ jobId: a });
    const all = await h.store.historyRead({ limit: 100 });
    expect(all.map((e) => [e.jobId, e.state])).toEqual([
      [a, 'scheduled'],
      [b, 'scheduled'],
      [a, 'cancelled'],
    ]);
    expect(new Set(all.map((e) => e.id)).size).toBe(3);
    expect((await h.store.historyRead({ after: all[0]!.position, limit: 1 })).map((e) => e.id)).toEqual([all[1]!.id]);
    expect(await h.store.historyRead({ after: all[2]!.position, limit: 10 })).toEqual([]);
  });

  it('starts an observer seen for the first time at the end of the log', async () => {
    const h = await ctx.open();
    await enqueue(h.store, { name: 'before' });
    const lease = await h.store.observerLease({ observer: 'late', workerId: 'w', leaseMs: LEASE_MS });
    expect(lease).toMatchObject({ observer: 'late', failures: 0 });
    expect(await h.store.historyRead({ after: lease!.position, limit: 10 })).toEqual([]);
    await enqueue(h.store, { name: 'after' });
    expect((await h.store.historyRead({ after: lease!.position, limit: 10 })).map((e) => e.name)).toEqual(['after']);
  });

  it('trims each job\'s history to the newest entries, sparing what an observer has not passed', async () => {
    const h = await ctx.open();
    await h.store.observerLease({ observer: 'audit', workerId: 'w', leaseMs: LEASE_MS });
    const id = await enqueue(h.store, { maxAttempts: 5 });
    for (let attempt = 1; attempt <= 3; attempt++) {
      await claimOne(h.store, 'w');
      await h.store.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId: id, attempt, kind: 'failed', error: `e${attempt}`, retryDelayMs: 0 }] });
    }
    const full = await h.store.jobHistory({ jobId: id });
    expect(full).toHaveLength(7);
    // The observer has only seen the first three entries, so it holds the rest in place.
    expect(await h.store.observerCommit({ observer: 'audit', workerId: 'w', position: full[2]!.position })).toBe(true);
    // The pass reads the log only up to the observer's place: three entries, all three beyond the newest two.
    expect(await h.store.historyTrim({ keep: 2, limit: 100 })).toEqual({ trimmed: 3, examined: 3 });
    expect((await h.store.jobHistory({ jobId: id })).map((e) => e.id)).toEqual(full.slice(3).map((e) => e.id));
    // Once the observer has passed the rest, the next pass reads on from where the last one stopped.
    expect(await h.store.observerCommit({ observer: 'audit', workerId: 'w', position: full[6]!.position })).toBe(true);
    expect(await h.store.historyTrim({ keep: 2, limit: 100 })).toEqual({ trimmed: 2, examined: 4 });
    expect((await h.store.jobHistory({ jobId: id })).map((e) => e.id)).toEqual(full.slice(5).map((e) => e.id));
    expect(await h.store.historyTrim({ keep: 2, limit: 100 })).toEqual({ trimmed: 0, examined: 0 });
  });

  it('leases an observer\'s cursor to one worker at a time, fences commits on the lease, and backs off after a failure', async () => {
    const h = await ctx.open();
    const start = await h.store.observerLease({ observer: 'o', workerId: 'a', leaseMs: LEASE_MS });
    expect(await h.store.observerLease({ observer: 'o', workerId: 'b', leaseMs: LEASE_MS })).toBeNull();
    for (const name of ['e1', 'e2', 'e3']) await enqueue(h.store, { name });
    const [e1, e2, e3] = await h.store.historyRead({ after: start!.position, limit: 10 });
    expect(await h.store.observerCommit({ observer: 'o', workerId: 'a', position: e2!.position })).toBe(true);
    expect(await h.store.observerCommit({ observer: 'o', workerId: 'b', position: e3!.position })).toBe(false);
    // A commit never moves the cursor back.
    expect(await h.store.observerCommit({ observer: 'o', workerId: 'a', position: e1!.position })).toBe(true);
    // A's lease lapses (it crashed mid-batch): B takes over from the last committed place.
    await h.advance(LEASE_MS);
    expect(await h.store.observerCommit({ observer: 'o', workerId: 'a', position: e3!.position })).toBe(false);
    expect(await h.store.observerLease({ observer: 'o', workerId: 'b', leaseMs: LEASE_MS })).toEqual({ observer: 'o', position: e2!.position, failures: 0 });
    expect(await h.store.observerFail({ observer: 'o', workerId: 'b', error: 'webhook down', retryDelayMs: 10_000 })).toBe(true);
    expect(await h.store.observerLease({ observer: 'o', workerId: 'b', leaseMs: LEASE_MS })).toBeNull();
    await h.advance(10_000);
    expect(await h.store.observerLease({ observer: 'o', workerId: 'c', leaseMs: LEASE_MS })).toEqual({ observer: 'o', position: e2!.position, failures: 1 });
    expect(await h.store.observerCommit({ observer: 'o', workerId: 'c', position: e3!.position })).toBe(true);
    await h.advance(LEASE_MS);
    expect(await h.store.observerLease({ observer: 'o', workerId: 'd', leaseMs: LEASE_MS })).toEqual({ observer: 'o', position: e3!.position, failures: 0 });
  });

  it('refuses a position the store did not hand out, and a bad failure report, with a typed error and no change', async () => {
    const h = await ctx.open();
    await h.store.observerLease({ observer: 'o', workerId: 'a', leaseMs: LEASE_MS });
    await expect(h.store.historyRead({ after: 'x; DROP TABLE jobs', limit: 10 })).rejects.toThrow(InvalidArgumentError);
    await expect(h.store.observerCommit({ observer: 'o', workerId: 'a', position: '-1' })).rejects.toThrow(/history position/);
    // A refused failure report changes nothing: the lease stays with its holder, with no failure counted.
    await expect(h.store.observerFail({ observer: 'o', workerId: 'a', error: 'x', retryDelayMs: -1 })).rejects.toThrow(InvalidArgumentError);
    expect(await h.store.observerLease({ observer: 'o', workerId: 'b', leaseMs: LEASE_MS })).toBeNull();
    expect(await h.store.observerLease({ observer: 'o', workerId: 'a', leaseMs: LEASE_MS })).toMatchObject({ failures: 0 });
  });
}
