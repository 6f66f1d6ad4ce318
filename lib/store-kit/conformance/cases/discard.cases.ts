import { expect, it } from '@jest/globals';
import { IllegalTransitionError } from '../../../core/index.js';
import type { JobStore } from '../../../store/index.js';
import type { SuiteContext } from '../harness.js';
import { claimOne, enqueue, mustGet } from './helpers.js';

const DAY = 86_400_000;

async function fail(store: JobStore, id: string, error: string): Promise<void> {
  const job = await claimOne(store, 'w');
  expect(job.id).toBe(id);
  await store.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId: id, attempt: job.attempt, kind: 'failed', error, retryDelayMs: 0 }] });
}

/** An operator's cancel of a dead letter or a quarantined job: it is discarded, not lost without a trace. */
export function discardCases(ctx: SuiteContext): void {
  it('discards a dead letter: cancelled with its error and attempts kept, in its history and the audit log', async () => {
    const h = await ctx.open();
    const id = await enqueue(h.store, { maxAttempts: 1 });
    await fail(h.store, id, 'broken for good');
    await h.advance(5_000);
    const { job, outcome } = await h.store.jobCancel({ jobId: id, actor: 'ops' });
    expect(outcome).toBe('cancelled');
    expect(job).toMatchObject({ id, state: 'cancelled', attempt: 1, lastError: 'broken for good' });
    expect(job.finishedAt?.getTime()).toBe(job.updatedAt.getTime());
    expect(await mustGet(h.store, id)).toEqual(job);
    expect((await h.store.jobHistory({ jobId: id })).map((e) => [e.state, e.attempt])).toEqual([
      ['scheduled', 0],
      ['running', 1],
      ['dead_lettered', 1],
      ['cancelled', 1],
    ]);
    expect((await h.store.auditList({ limit: 1 }))[0]).toMatchObject({ actor: 'ops', action: 'job.cancel', target: id, detail: { outcome: 'cancelled', from: 'dead_lettered' } });
    expect(await h.store.jobListDeadLettered()).toEqual([]);
    // The counts move with it, before a fold and after.
    const counts = async () => (await h.store.queueList()).find((queue) => queue.name === 'default')?.counts;
    expect((await counts())?.dead_lettered ?? 0).toBe(0);
    expect((await counts())?.cancelled).toBe(1);
    while ((await h.store.jobCountsFold({ limit: 1_000 })) > 0);
    expect((await counts())?.dead_lettered ?? 0).toBe(0);
    expect((await counts())?.cancelled).toBe(1);
    expect((await h.store.jobCancel({ jobId: id })).outcome).toBe('already_cancelled');
  });

  it('with onlyFrom, refuses a job replayed since it was listed and leaves it as it is', async () => {
    const h = await ctx.open();
    const id = await enqueue(h.store, { maxAttempts: 1 });
    await fail(h.store, id, 'x');
    await h.store.jobReplay({ jobId: id });
    const before = await h.snapshot();
    const discard = () => h.store.jobCancel({ jobId: id, onlyFrom: ['dead_lettered', 'quarantined'] });
    await expect(discard()).rejects.toBeInstanceOf(IllegalTransitionError);
    await expect(discard()).rejects.toThrow(`Job ${id} is scheduled, not dead_lettered or quarantined, so it was left as it is.`);
    expect(await h.snapshot()).toEqual(before);
    await fail(h.store, id, 'again');
    expect((await discard()).job).toMatchObject({ state: 'cancelled', lastError: 'again' });
  });

  it('discards a quarantined job the same way', async () => {
    const h = await ctx.open();
    const id = await enqueue(h.store);
    await claimOne(h.store, 'w');
    await h.store.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId: id, attempt: 1, kind: 'quarantined', reason: 'no handler' }] });
    expect((await h.store.jobCancel({ jobId: id })).job).toMatchObject({ state: 'cancelled', attempt: 1, lastError: 'no handler' });
  });

  it('does not settle its dependants a second time', async () => {
    const h = await ctx.open();
    const first = await enqueue(h.store, { name: 'first', maxAttempts: 1 });
    const second = await enqueue(h.store, { name: 'second', delayMs: DAY });
    const tolerant = await enqueue(h.store, { name: 'tolerant', dependsOn: [first, second], dependencyMode: 'on_any_terminal' });
    const strict = await enqueue(h.store, { name: 'strict', dependsOn: [first] });
    await fail(h.store, first, 'x');
    while ((await h.store.jobSettleDependencies({ limit: 500 })) > 0);
    expect(await mustGet(h.store, strict)).toMatchObject({ state: 'cancelled', lastError: `parent ${first} ended dead_lettered` });
    const before = await mustGet(h.store, tolerant);
    expect(before.state).toBe('awaiting_parents');

    await h.store.jobCancel({ jobId: first });
    while ((await h.store.jobSettleDependencies({ limit: 500 })) > 0);
    // One of its two parents finished once: the latch still waits for the second.
    expect(await mustGet(h.store, tolerant)).toEqual(before);
    expect(await mustGet(h.store, strict)).toMatchObject({ state: 'cancelled', lastError: `parent ${first} ended dead_lettered` });
    await h.store.jobCancel({ jobId: second });
    while ((await h.store.jobSettleDependencies({ limit: 500 })) > 0);
    expect((await mustGet(h.store, tolerant)).state).toBe('scheduled');
  });

  it('lets retention delete a discarded dead letter, which it never deletes undiscarded', async () => {
    const h = await ctx.open();
    const kept = await enqueue(h.store, { name: 'kept', maxAttempts: 1 });
    await fail(h.store, kept, 'x');
    const discarded = await enqueue(h.store, { name: 'discarded', maxAttempts: 1 });
    await fail(h.store, discarded, 'y');
    await h.advance(2 * DAY);
    await h.store.jobCancel({ jobId: discarded });
    // Retention counts from the discard, not from the dead letter.
    expect(await h.store.jobPurge({ olderThanMs: DAY, limit: 100 })).toBe(0);
    await h.advance(DAY + 1);
    expect(await h.store.jobPurge({ olderThanMs: DAY, limit: 100 })).toBe(1);
    expect(await h.store.jobGet({ jobId: discarded })).toBeNull();
    expect((await mustGet(h.store, kept)).state).toBe('dead_lettered');
  });
}
