import { expect, it } from '@jest/globals';
import type { JobRecord } from '../../../core/index.js';
import type { SuiteContext } from '../harness.js';
import { claimNone, claimOne, enqueue, LEASE_MS, mustGet } from './helpers.js';

export function claimCases(ctx: SuiteContext): void {
  it('stamps the lease: running, attempt 1, this worker, leasedUntil = now + lease', async () => {
    const { store } = await ctx.open();
    const id = await enqueue(store);
    const claimed = await claimOne(store, 'worker-a');
    expect(claimed).toMatchObject({ id, state: 'running', attempt: 1, workerId: 'worker-a' });
    expect(claimed.leasedUntil!.getTime() - claimed.updatedAt.getTime()).toBe(LEASE_MS);
    expect(await mustGet(store, id)).toEqual(claimed);
  });

  it('takes due jobs by runAt, then enqueue order, never more than the limit', async () => {
    const h = await ctx.open();
    const base = Date.UTC(2020, 0, 1);
    const late = await enqueue(h.store, { runAt: new Date(base + 2_000) });
    const tieA = await enqueue(h.store, { runAt: new Date(base + 1_000) });
    const tieB = await enqueue(h.store, { runAt: new Date(base + 1_000) });
    const early = await enqueue(h.store, { runAt: new Date(base) });
    const future = await enqueue(h.store, { delayMs: 3_600_000 });

    const first = await h.store.jobClaim({ workerId: 'w', limit: 3, queues: ['default'], leaseMs: LEASE_MS });
    expect(first.map((j) => j.id)).toEqual([early, tieA, tieB]);
    const rest = await h.store.jobClaim({ workerId: 'w', limit: 10, queues: ['default'], leaseMs: LEASE_MS });
    expect(rest.map((j) => j.id)).toEqual([late]);
    expect((await mustGet(h.store, future)).state).toBe('scheduled');
  });

  it('claims only from the queues asked for, and never from a paused queue', async () => {
    const h = await ctx.open();
    const mail = await enqueue(h.store, { queue: 'mail' });
    const sms = await enqueue(h.store, { queue: 'sms' });
    await claimNone(h.store, 'w', ['default']);

    await h.store.queuePause({ queue: 'mail' });
    const claimed = await h.store.jobClaim({ workerId: 'w', limit: 10, queues: ['mail', 'sms'], leaseMs: LEASE_MS });
    expect(claimed.map((j) => j.id)).toEqual([sms]);
    await claimNone(h.store, 'w', ['mail']);
    expect((await mustGet(h.store, mail)).state).toBe('scheduled');

    await h.store.queueResume({ queue: 'mail' });
    expect((await claimOne(h.store, 'w', ['mail'])).id).toBe(mail);
  });

  it('claims for a worker serving 1,000 queues (one listed twice) as for one: claim order, unlisted and paused queues skipped', async () => {
    const h = await ctx.open();
    const queues = [...Array.from({ length: 1_000 }, (_, k) => `q${k}`), 'q500'];
    const claim = async () => (await h.store.jobClaim({ workerId: 'w', limit: 100, queues, leaseMs: LEASE_MS })).map((j) => j.id);
    const base = Date.UTC(2020, 0, 1);
    const late = await enqueue(h.store, { queue: 'q0', runAt: new Date(base + 2_000) });
    const tieA = await enqueue(h.store, { queue: 'q999', runAt: new Date(base + 1_000) });
    const paused = await enqueue(h.store, { queue: 'q500', runAt: new Date(base) });
    const tieB = await enqueue(h.store, { queue: 'q500', runAt: new Date(base + 1_000) });
    await enqueue(h.store, { queue: 'q1000', runAt: new Date(base) });
    await enqueue(h.store, { queue: 'default', runAt: new Date(base) });
    const early = await enqueue(h.store, { queue: 'q42', runAt: new Date(base) });

    await h.store.queuePause({ queue: 'q500' });
    expect(await claim()).toEqual([early, tieA, late]);
    const more = await enqueue(h.store, { queue: 'q500', runAt: new Date(base) });
    await h.store.queueResume({ queue: 'q500' });
    expect(await claim()).toEqual([paused, more, tieB]);
    expect(await claim()).toEqual([]);
  });

  it('does not hand a job with a live lease to another worker', async () => {
    const h = await ctx.open();
    await enqueue(h.store);
    await claimOne(h.store, 'worker-a');
    await claimNone(h.store, 'worker-b');
    await h.advance(LEASE_MS - 5_000);
    await claimNone(h.store, 'worker-b');
  });

  it('never claims a job whose attempts are used up, even after its lease lapses', async () => {
    const h = await ctx.open();
    const id = await enqueue(h.store, { maxAttempts: 1 });
    await claimOne(h.store, 'worker-a');
    await h.advance(LEASE_MS);
    await claimNone(h.store, 'worker-b');
    expect(await mustGet(h.store, id)).toMatchObject({ state: 'running', attempt: 1, workerId: 'worker-a' });
  });

  it('gives each of 2,000 jobs to exactly one of 8 concurrent claimers', async () => {
    const h = await ctx.open();
    const total = 2_000;
    for (let i = 0; i < total; i += 500) {
      await h.store.jobEnqueueMany({ jobs: Array.from({ length: 500 }, (_, k) => ({ name: 'bulk', payload: { i: i + k } })) });
    }
    const byWorker = new Map<string, JobRecord[]>();
    await Promise.all(
      Array.from({ length: 8 }, async (_, w) => {
        const workerId = `claimer-${w}`;
        const mine: JobRecord[] = [];
        byWorker.set(workerId, mine);
        for (;;) {
          const batch = await h.store.jobClaim({ workerId, limit: 25, queues: ['default'], leaseMs: LEASE_MS });
          if (batch.length === 0) break;
          mine.push(...batch);
        }
      }),
    );
    const all = [...byWorker.values()].flat();
    expect(all).toHaveLength(total);
    expect(new Set(all.map((j) => j.id)).size).toBe(total);
    for (const [workerId, jobs] of byWorker) for (const job of jobs) expect(job).toMatchObject({ workerId, attempt: 1, state: 'running' });
    const stored = await h.store.jobList({ state: 'running', limit: 1_000 });
    expect(stored.every((j) => byWorker.get(j.workerId!)!.some((c) => c.id === j.id))).toBe(true);
  });
}
