import { expect, it } from '@jest/globals';
import type { SuiteContext } from '../harness.js';
import { claimOne, enqueue, mustGet } from './helpers.js';

const DAY = 86_400_000;

export function retentionCases(ctx: SuiteContext): void {
  it('deletes only succeeded and cancelled jobs older than the setting, with their history', async () => {
    const h = await ctx.open();
    const old = await enqueue(h.store, { name: 'old' });
    await claimOne(h.store, 'w');
    await h.store.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId: old, attempt: 1, kind: 'succeeded' }] });
    const oldCancelled = await enqueue(h.store, { name: 'old.cancelled' });
    await h.store.jobCancel({ jobId: oldCancelled });
    const oldDead = await enqueue(h.store, { name: 'old.dead', maxAttempts: 1 });
    await claimOne(h.store, 'w');
    await h.store.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId: oldDead, attempt: 1, kind: 'failed', error: 'x', retryDelayMs: 0 }] });
    const waiting = await enqueue(h.store, { name: 'waiting', delayMs: 3 * DAY });
    await h.advance(DAY + 1);
    const recent = await enqueue(h.store, { name: 'recent' });
    await claimOne(h.store, 'w');
    await h.store.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId: recent, attempt: 1, kind: 'succeeded' }] });

    expect(await h.store.jobPurge({ olderThanMs: DAY, limit: 1 })).toBe(1);
    expect(await h.store.jobPurge({ olderThanMs: DAY, limit: 100 })).toBe(1);
    expect(await h.store.jobPurge({ olderThanMs: DAY, limit: 100 })).toBe(0);
    expect(await h.store.jobGet({ jobId: old })).toBeNull();
    expect(await h.store.jobGet({ jobId: oldCancelled })).toBeNull();
    expect(await h.store.jobHistory({ jobId: old })).toEqual([]);
    expect((await mustGet(h.store, oldDead)).state).toBe('dead_lettered');
    expect((await mustGet(h.store, waiting)).state).toBe('scheduled');
    expect((await mustGet(h.store, recent)).state).toBe('succeeded');
    expect((await h.store.jobHistory({ jobId: recent })).length).toBeGreaterThan(0);
  });

  it('keeps a finished parent whose dependants are not settled yet', async () => {
    const h = await ctx.open();
    const parent = await enqueue(h.store, { name: 'parent' });
    const child = await enqueue(h.store, { name: 'child', dependsOn: [parent] });
    await claimOne(h.store, 'w');
    await h.store.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId: parent, attempt: 1, kind: 'succeeded', output: { id: 7 } }] });
    while ((await h.store.jobSettleDependencies({ limit: 100 })) > 0);
    await h.advance(DAY + 1);
    expect(await h.store.jobPurge({ olderThanMs: DAY, limit: 100 })).toBe(1);
    expect(await h.store.jobGet({ jobId: parent })).toBeNull();
    expect((await mustGet(h.store, child)).state).toBe('scheduled');
    // The dependant can no longer read the purged parent's output; it reads as absent.
    expect(await h.store.jobParentOutput({ jobId: child, ancestorId: parent })).toEqual({ found: false, output: undefined });
  });
}
