import { expect, it } from '@jest/globals';
import { OccurrenceId } from '../../../core/index.js';
import type { SuiteContext } from '../harness.js';
import { claimNone, claimOne, mustGet } from './helpers.js';

export function enqueueCases(ctx: SuiteContext): void {
  it('writes a scheduled job with defaults, due now, and reads it back whole', async () => {
    const { store } = await ctx.open();
    const payload = { orderId: 'o-1', lines: [1, 2, 3], note: 'über ✓' };
    const result = await store.jobEnqueue({ job: { name: 'orders.confirm', payload } });
    expect(result.created).toBe(true);

    const job = await mustGet(store, result.id);
    expect(job).toMatchObject({
      id: result.id,
      name: 'orders.confirm',
      queue: 'default',
      payload,
      state: 'scheduled',
      attempt: 0,
      maxAttempts: 10,
      workerId: null,
      leasedUntil: null,
      cancelRequested: false,
      lastError: null,
      output: null,
      finishedAt: null,
    });
    expect(job.runAt.getTime()).toBe(job.scheduledFor.getTime());
    expect(job.runAt.getTime()).toBe(job.createdAt.getTime());
    expect(job.occurrenceId).toBe(OccurrenceId.derive(job.id, job.scheduledFor));
  });

  it('keeps a caller-chosen id, and a second enqueue of that id writes nothing', async () => {
    const h = await ctx.open();
    const id = '0190a5a0-0000-7000-8000-000000000001';
    expect(await h.store.jobEnqueue({ job: { id, name: 'a', payload: 1, maxAttempts: 3 } })).toEqual({ id, created: true });
    const before = await h.snapshot();
    expect(await h.store.jobEnqueue({ job: { id, name: 'b', payload: 2, maxAttempts: 5 } })).toEqual({ id, created: false });
    expect(await h.snapshot()).toEqual(before);
    expect(await mustGet(h.store, id)).toMatchObject({ name: 'a', payload: 1, maxAttempts: 3 });
  });

  it('enqueueMany writes a batch in order and reports which ids were new', async () => {
    const h = await ctx.open();
    const existing = '0190a5a0-0000-7000-8000-0000000000aa';
    await h.store.jobEnqueue({ job: { id: existing, name: 'x', payload: null } });
    const results = await h.store.jobEnqueueMany({
      jobs: [
        { name: 'batch', payload: 1 },
        { id: existing, name: 'batch', payload: 2 },
        { name: 'batch', payload: 3, queue: 'mail' },
      ],
    });
    expect(results.map((r) => r.created)).toEqual([true, false, true]);
    expect(await h.countJobs()).toBe(3);
    const first = await claimOne(h.store);
    expect(first.id).toBe(existing);
    expect((await claimOne(h.store)).payload).toBe(1);
    expect((await claimOne(h.store, 'worker-a', ['mail'])).payload).toBe(3);
    expect(await h.store.jobEnqueueMany({ jobs: [] })).toEqual([]);
  });

  it('runAt and delayMs put the job in the future; the store clock decides when it is due', async () => {
    const h = await ctx.open();
    const delayed = await h.store.jobEnqueue({ job: { name: 'later', payload: {}, delayMs: 60_000 } });
    const job = await mustGet(h.store, delayed.id);
    expect(job.runAt.getTime() - job.createdAt.getTime()).toBe(60_000);
    expect(job.scheduledFor.getTime()).toBe(job.runAt.getTime());
    await claimNone(h.store);
    await h.advance(60_000);
    expect((await claimOne(h.store)).id).toBe(delayed.id);

    const at = new Date(Date.UTC(2001, 0, 1, 12, 0, 0, 250));
    const past = await h.store.jobEnqueue({ job: { name: 'past', payload: {}, runAt: at } });
    const pastJob = await mustGet(h.store, past.id);
    expect(pastJob.runAt.toISOString()).toBe(at.toISOString());
    expect(pastJob.occurrenceId).toBe(OccurrenceId.derive(past.id, at));
    expect((await claimOne(h.store)).id).toBe(past.id);
  });

  it('keeps payloads of every JSON shape intact', async () => {
    const { store } = await ctx.open();
    const payloads = [null, 0, -1.5, true, 'text', [], {}, { nested: { deep: [1, { x: 'y' }] } }, 'emoji 🎉 and quotes "\'\\'];
    for (const payload of payloads) {
      const { id } = await store.jobEnqueue({ job: { name: 'shape', payload } });
      expect((await mustGet(store, id)).payload).toEqual(payload);
    }
  });
}
