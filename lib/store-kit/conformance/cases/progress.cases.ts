import { expect, it } from '@jest/globals';
import { PayloadTooLargeError } from '../../../core/index.js';
import type { SuiteContext } from '../harness.js';
import { claimOne, enqueue, expectRefused, LEASE_MS, mustGet } from './helpers.js';

/**
 * Progress a running attempt reports: written only with its heartbeat's renewal, fenced on
 * `(workerId, attempt)` and a live lease, and kept after the attempt ends until a later one reports.
 */
export function progressCases(ctx: SuiteContext): void {
  it('writes progress with the renewal, leaves it alone on a beat without any, and keeps it once the job ends', async () => {
    const h = await ctx.open();
    const id = await enqueue(h.store);
    expect((await claimOne(h.store, 'w')).progress).toBeNull();
    const beat = await h.store.jobHeartbeat({ workerId: 'w', leases: [{ jobId: id, attempt: 1, progress: { done: 3, of: 10 } }], leaseMs: LEASE_MS });
    expect([beat.renewed.map((l) => Object.keys(l).sort()), beat.lost]).toEqual([[['attempt', 'cancelRequested', 'jobId', 'leasedUntil']], []]);
    expect((await mustGet(h.store, id)).progress).toEqual({ done: 3, of: 10 });
    await h.store.jobHeartbeat({ workerId: 'w', leases: [{ jobId: id, attempt: 1 }], leaseMs: LEASE_MS });
    expect((await mustGet(h.store, id)).progress).toEqual({ done: 3, of: 10 });
    // A JSON null is a value like any other: the handler said "no progress to show".
    await h.store.jobHeartbeat({ workerId: 'w', leases: [{ jobId: id, attempt: 1, progress: '100%' }], leaseMs: LEASE_MS });
    await h.store.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId: id, attempt: 1, kind: 'succeeded', output: 'ok' }] });
    expect(await mustGet(h.store, id)).toMatchObject({ state: 'succeeded', progress: '100%', output: 'ok' });
    expect((await h.store.jobList({ limit: 10 })).find((j) => j.id === id)?.progress).toBe('100%');
  });

  it("keeps the last attempt's progress across a retry and a replay, until a new attempt reports", async () => {
    const h = await ctx.open();
    const id = await enqueue(h.store, { maxAttempts: 2, retry: { baseDelayMs: 0, jitter: false } });
    await claimOne(h.store, 'w');
    await h.store.jobHeartbeat({ workerId: 'w', leases: [{ jobId: id, attempt: 1, progress: { step: 'download' } }], leaseMs: LEASE_MS });
    await h.store.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId: id, attempt: 1, kind: 'failed', error: 'x', retryDelayMs: 0 }] });
    expect((await claimOne(h.store, 'w')).progress).toEqual({ step: 'download' });
    await h.store.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId: id, attempt: 2, kind: 'failed', error: 'x', retryDelayMs: 0 }] });
    expect(await mustGet(h.store, id)).toMatchObject({ state: 'dead_lettered', progress: { step: 'download' } });
    await h.store.jobReplay({ jobId: id });
    expect((await claimOne(h.store, 'w')).progress).toEqual({ step: 'download' });
    await h.store.jobHeartbeat({ workerId: 'w', leases: [{ jobId: id, attempt: 1, progress: { step: 'upload' } }], leaseMs: LEASE_MS });
    expect((await mustGet(h.store, id)).progress).toEqual({ step: 'upload' });
  });

  it("refuses a stale worker's progress: it cannot overwrite the newer attempt's, nor a finished job's", async () => {
    const h = await ctx.open();
    const id = await enqueue(h.store, { maxAttempts: 3 });
    await claimOne(h.store, 'worker-a');
    await h.store.jobHeartbeat({ workerId: 'worker-a', leases: [{ jobId: id, attempt: 1, progress: 'a1' }], leaseMs: LEASE_MS });
    await h.advance(LEASE_MS);
    await claimOne(h.store, 'worker-b');
    await h.store.jobHeartbeat({ workerId: 'worker-b', leases: [{ jobId: id, attempt: 2, progress: 'b2' }], leaseMs: LEASE_MS });

    let before = await h.snapshot();
    // The old lease, the new attempt's number under the old worker, and the old number under the new worker: all refused.
    for (const [workerId, attempt] of [['worker-a', 1], ['worker-a', 2], ['worker-b', 1]] as const) {
      expect(await h.store.jobHeartbeat({ workerId, leases: [{ jobId: id, attempt, progress: 'stale' }], leaseMs: LEASE_MS })).toEqual({
        renewed: [],
        lost: [{ jobId: id, attempt }],
      });
    }
    expect(await h.snapshot()).toEqual(before);
    expect((await mustGet(h.store, id)).progress).toBe('b2');

    await h.store.jobCompleteMany({ workerId: 'worker-b', outcomes: [{ jobId: id, attempt: 2, kind: 'succeeded' }] });
    before = await h.snapshot();
    const late = await h.store.jobHeartbeat({ workerId: 'worker-b', leases: [{ jobId: id, attempt: 2, progress: 'after the end' }], leaseMs: LEASE_MS });
    expect(late).toEqual({ renewed: [], lost: [{ jobId: id, attempt: 2 }] });
    expect(await h.snapshot()).toEqual(before);
  });

  it('writes each lease of a mixed batch by its own fence: progress where held, nothing where lost', async () => {
    const h = await ctx.open();
    const [a, b, c] = [await enqueue(h.store), await enqueue(h.store), await enqueue(h.store)];
    await h.store.jobClaim({ workerId: 'w', limit: 2, queues: ['default'], leaseMs: LEASE_MS });
    await claimOne(h.store, 'other');
    const beat = await h.store.jobHeartbeat({
      workerId: 'w',
      leases: [
        { jobId: a, attempt: 1, progress: 1 },
        { jobId: b, attempt: 1 },
        { jobId: c, attempt: 1, progress: 3 },
      ],
      leaseMs: LEASE_MS,
    });
    expect(beat.renewed.map((l) => l.jobId).sort()).toEqual([a, b].sort());
    expect(beat.lost).toEqual([{ jobId: c, attempt: 1 }]);
    expect([(await mustGet(h.store, a)).progress, (await mustGet(h.store, b)).progress, (await mustGet(h.store, c)).progress]).toEqual([1, null, null]);
  });

  it('lets the live attempt win when a stale worker reports at the same moment', async () => {
    const h = await ctx.open();
    const id = await enqueue(h.store, { maxAttempts: 3 });
    await claimOne(h.store, 'worker-a');
    await h.advance(LEASE_MS);
    await claimOne(h.store, 'worker-b');
    for (let i = 0; i < 5; i += 1) {
      const [live, stale] = await Promise.all([
        h.store.jobHeartbeat({ workerId: 'worker-b', leases: [{ jobId: id, attempt: 2, progress: { i } }], leaseMs: LEASE_MS }),
        h.store.jobHeartbeat({ workerId: 'worker-a', leases: [{ jobId: id, attempt: 1, progress: 'stale' }], leaseMs: LEASE_MS }),
      ]);
      expect(stale).toEqual({ renewed: [], lost: [{ jobId: id, attempt: 1 }] });
      // The live beat may meet the row busy (PostgreSQL passes a locked row by) but never loses it.
      expect(live.lost).toEqual([]);
      if (live.renewed.length === 1) expect((await mustGet(h.store, id)).progress).toEqual({ i });
    }
    expect((await mustGet(h.store, id)).progress).not.toBe('stale');
  });

  it.each([
    ['over the progress limit', 'z'.repeat(40), /leases\[0\]\.progress is 42 bytes as JSON, over the limit of 32 bytes/, PayloadTooLargeError],
    ['not JSON', () => 1, /leases\[0\]\.progress/, undefined],
    ['too deep', [[[[[1]]]]], /leases\[0\]\.progress/, undefined],
  ] as const)('refuses progress %s before anything is written, renewing no lease of the batch', async (_label, progress, message, type) => {
    const h = await ctx.open({ limits: { maxProgressBytes: 32, maxJsonDepth: 4 } });
    const id = await enqueue(h.store);
    await claimOne(h.store, 'w');
    // Later than the claim, so a renewal that slipped through would show in the snapshot.
    await h.advance(1_000);
    const before = await h.snapshot();
    await expectRefused(
      () => h.store.jobHeartbeat({ workerId: 'w', leases: [{ jobId: id, attempt: 1, progress: progress as unknown }], leaseMs: LEASE_MS }),
      message,
      type,
    );
    expect(await h.snapshot()).toEqual(before);
  });
}
