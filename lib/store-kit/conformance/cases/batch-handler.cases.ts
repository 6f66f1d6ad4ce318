import { expect, it } from '@jest/globals';
import type { SuiteContext } from '../harness.js';
import { enqueue, LEASE_MS, mustGet } from './helpers.js';

/**
 * What a batch handler (issue 39 item 6) asks of a store: the jobs of one call are claimed
 * together by one worker, renewed together, and their outcomes come back together, in one write
 * or riding the next claim. Each must still be judged on its own lease: one lost lease, one
 * failure or one snooze changes that job alone.
 */
export function batchHandlerCases(ctx: SuiteContext): void {
  /** Five jobs of one name, claimed by worker-a in one claim, as a batch call's jobs are. */
  async function oneCall(h: Awaited<ReturnType<SuiteContext['open']>>) {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await enqueue(h.store, { name: 'index', payload: { i }, maxAttempts: 3 }));
    const claimed = await h.store.jobClaim({ workerId: 'worker-a', limit: 5, queues: ['default'], leaseMs: LEASE_MS });
    expect(claimed.map((job) => job.id).sort()).toEqual([...ids].sort());
    return ids;
  }

  it("issue 39 item 6: one write of a call's outcomes judges each job on its own lease: successes, a failure, a dead letter, a snooze and a lost lease", async () => {
    const h = await ctx.open();
    const [ok, failed, dead, snoozed, lost] = await oneCall(h);
    // lost's lease lapses and worker-b takes it: worker-a's report of it must be refused.
    await h.store.jobHeartbeat({ workerId: 'worker-a', leases: [ok, failed, dead, snoozed].map((jobId) => ({ jobId: jobId!, attempt: 1 })), leaseMs: LEASE_MS * 4 });
    await h.advance(LEASE_MS + 1);
    const taken = await h.store.jobClaim({ workerId: 'worker-b', limit: 5, queues: ['default'], leaseMs: LEASE_MS });
    expect(taken.map((job) => job.id)).toEqual([lost]);
    const results = await h.store.jobCompleteMany({
      workerId: 'worker-a',
      outcomes: [
        { jobId: ok!, attempt: 1, kind: 'succeeded', output: { row: 0 } },
        { jobId: failed!, attempt: 1, kind: 'failed', error: 'row 1 was refused', retryDelayMs: 60_000 },
        { jobId: dead!, attempt: 1, kind: 'dead_lettered', error: 'row 2 can never be written' },
        { jobId: snoozed!, attempt: 1, kind: 'snoozed', delayMs: 5_000 },
        { jobId: lost!, attempt: 1, kind: 'succeeded', output: { row: 4 } },
      ],
    });
    expect(results.map((r) => `${r.status}:${r.status === 'applied' ? r.state : '-'}`)).toEqual(['applied:succeeded', 'applied:scheduled', 'applied:dead_lettered', 'applied:scheduled', 'stale:-']);
    expect(await mustGet(h.store, ok!)).toMatchObject({ state: 'succeeded', output: { row: 0 } });
    expect(await mustGet(h.store, failed!)).toMatchObject({ state: 'scheduled', attempt: 1, lastError: 'row 1 was refused' });
    expect(await mustGet(h.store, dead!)).toMatchObject({ state: 'dead_lettered', lastError: 'row 2 can never be written' });
    expect(await mustGet(h.store, snoozed!)).toMatchObject({ state: 'scheduled', snoozes: 1, maxAttempts: 4 });
    expect(await mustGet(h.store, lost!)).toMatchObject({ state: 'running', workerId: 'worker-b', attempt: 2, output: null });
  });

  it("issue 39 item 6: a call's outcomes riding the next claim are judged one by one, and the claim goes ahead", async () => {
    const h = await ctx.open();
    if (!h.store.jobCompleteAndClaim) return expect(h.store.jobCompleteAndClaim).toBeUndefined();
    const ids = await oneCall(h);
    const next = await enqueue(h.store, { name: 'index', payload: { i: 5 } });
    const both = await h.store.jobCompleteAndClaim({
      workerId: 'worker-a',
      outcomes: ids.map((jobId, i) => (i === 2 ? { jobId, attempt: 1, kind: 'failed' as const, error: 'row 2 was refused', retryDelayMs: 0 } : { jobId, attempt: 1, kind: 'succeeded' as const })),
      claim: { limit: 10, queues: ['default'], leaseMs: LEASE_MS, includeLapsed: true },
    });
    expect(both.results.filter((r) => r.status === 'applied')).toHaveLength(5);
    // The failed job is due again at once: taken by this very call or by the next claim, but once,
    // as attempt 2; no job of the call is taken again.
    const later = await h.store.jobClaim({ workerId: 'worker-a', limit: 10, queues: ['default'], leaseMs: LEASE_MS });
    const label = (job: { id: string; attempt: number }) => `${job.id === next ? 'next' : job.id === ids[2] ? 'failed' : 'other'}:${job.attempt}`;
    expect([...both.jobs, ...later].map(label).sort()).toEqual(['failed:2', 'next:1']);
    for (const [i, id] of ids.entries()) if (i !== 2) expect((await mustGet(h.store, id)).state).toBe('succeeded');
  });

  it("issue 39 item 6: one heartbeat renews every job of a call and reports only the lease that was lost", async () => {
    const h = await ctx.open();
    const ids = await oneCall(h);
    await h.store.jobRelinquishMany({ workerId: 'worker-a', leases: [{ jobId: ids[3]!, attempt: 1 }] });
    const beat = await h.store.jobHeartbeat({ workerId: 'worker-a', leases: ids.map((jobId) => ({ jobId, attempt: 1 })), leaseMs: LEASE_MS });
    expect(beat.renewed.map((lease) => lease.jobId).sort()).toEqual(ids.filter((_, i) => i !== 3).sort());
    expect(beat.lost).toEqual([{ jobId: ids[3], attempt: 1 }]);
  });
}
