import { expect, it } from '@jest/globals';
import type { SuiteContext } from '../harness.js';
import { claimOne, enqueue, expectRefused, LEASE_MS } from './helpers.js';

const SWEEP_LEASE_MS = 15_000;

export function maintenanceCases(ctx: SuiteContext): void {
  it('leases a maintenance task to one worker at a time, renews it for its holder, and hands it on once it lapses', async () => {
    const h = await ctx.open();
    const lease = (workerId: string) => h.store.maintenanceLease({ task: 'sweep', workerId, leaseMs: SWEEP_LEASE_MS });
    expect(await lease('a')).toBe(true);
    expect(await lease('b')).toBe(false);
    // The holder renews it before it lapses: a node that keeps sweeping keeps the lease.
    await h.advance(SWEEP_LEASE_MS - 1_000);
    expect(await lease('a')).toBe(true);
    await h.advance(SWEEP_LEASE_MS - 1_000);
    expect(await lease('b')).toBe(false);
    // The holder stopped asking (it stopped, or crashed): once the lease lapses, another node takes it.
    await h.advance(1_000);
    expect(await lease('b')).toBe(true);
    expect(await lease('a')).toBe(false);
    // Tasks are leased separately; one the migrations did not name is created on first use.
    expect(await h.store.maintenanceLease({ task: 'another-task', workerId: 'a', leaseMs: SWEEP_LEASE_MS })).toBe(true);
  });

  it('refuses a maintenance lease with a bad task, worker or length before writing anything', async () => {
    const h = await ctx.open();
    const before = await h.snapshot();
    await expectRefused(() => h.store.maintenanceLease({ task: '', workerId: 'a', leaseMs: 1_000 }), /^task must be 1 to 64 characters/);
    await expectRefused(() => h.store.maintenanceLease({ task: 'x'.repeat(65), workerId: 'a', leaseMs: 1_000 }), /^task must be 1 to 64 characters/);
    await expectRefused(() => h.store.maintenanceLease({ task: 'sweep', workerId: 'a\nb', leaseMs: 1_000 }), /^workerId must be/);
    await expectRefused(() => h.store.maintenanceLease({ task: 'sweep', workerId: 'a', leaseMs: 0 }), /^leaseMs must be/);
    await expectRefused(() => h.store.maintenanceLease({ task: 'sweep', workerId: 'a', leaseMs: 86_400_001 }), /^leaseMs must be/);
    expect(await h.snapshot()).toEqual(before);
    // Nothing was leased by the refused calls.
    expect(await h.store.maintenanceLease({ task: 'sweep', workerId: 'b', leaseMs: 1_000 })).toBe(true);
  });

  it('trims only what was written since its last pass, a bounded number of entries at a time, until it catches up', async () => {
    const h = await ctx.open();
    const long = await enqueue(h.store, { name: 'long', maxAttempts: 20 });
    for (let attempt = 1; attempt <= 6; attempt++) {
      await claimOne(h.store, 'w');
      await h.store.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId: long, attempt, kind: 'failed', error: `e${attempt}`, retryDelayMs: 0 }] });
    }
    // A millisecond later than `long`'s retry time, so the claim below takes `long`: PostgreSQL's
    // enqueue stores its run time cut to the millisecond, a retry's keeps its microseconds, and
    // within one millisecond `short` could otherwise sort first.
    const short = await enqueue(h.store, { name: 'short', delayMs: 1 });
    // 13 entries for `long` (enqueue, then a claim and a failure per attempt) and 1 for `short`.
    expect(await h.store.jobHistory({ jobId: long })).toHaveLength(13);

    const passes = [];
    for (;;) {
      const pass = await h.store.historyTrim({ keep: 4, limit: 5 });
      passes.push(pass);
      if (pass.examined < 5) break;
    }
    // The first pass met `long` and cut it down to four; the second read the rest; the third found nothing new.
    expect(passes.map((pass) => pass.examined)).toEqual([5, 5, 0]);
    expect(passes.map((pass) => pass.trimmed)).toEqual([9, 0, 0]);
    const kept = await h.store.jobHistory({ jobId: long });
    expect(kept.map((entry) => entry.attempt)).toEqual([5, 5, 6, 6]);
    expect(await h.store.jobHistory({ jobId: short })).toHaveLength(1);

    // Caught up: a pass reads nothing. A job that gains entries is trimmed when they are read.
    expect(await h.store.historyTrim({ keep: 4, limit: 5 })).toEqual({ trimmed: 0, examined: 0 });
    await claimOne(h.store, 'w');
    expect(await h.store.historyTrim({ keep: 4, limit: 5 })).toEqual({ trimmed: 1, examined: 1 });
    expect((await h.store.jobHistory({ jobId: long })).map((entry) => `${entry.state}/${entry.attempt}`)).toEqual(['scheduled/5', 'running/6', 'scheduled/6', 'running/7']);
  });

  it('keeps the trim behind an observer that has not read the log yet, and trims what it held back once the observer passes it', async () => {
    const h = await ctx.open();
    const start = await h.store.observerLease({ observer: 'slow', workerId: 'o', leaseMs: LEASE_MS });
    const id = await enqueue(h.store, { maxAttempts: 5 });
    for (let attempt = 1; attempt <= 2; attempt++) {
      await claimOne(h.store, 'w');
      await h.store.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId: id, attempt, kind: 'failed', error: 'x', retryDelayMs: 0 }] });
    }
    expect(await h.store.historyTrim({ keep: 1, limit: 100 })).toEqual({ trimmed: 0, examined: 0 });
    expect(await h.store.jobHistory({ jobId: id })).toHaveLength(5);
    const log = await h.store.historyRead({ after: start!.position, limit: 10 });
    expect(await h.store.observerCommit({ observer: 'slow', workerId: 'o', position: log.at(-1)!.position })).toBe(true);
    expect(await h.store.historyTrim({ keep: 1, limit: 100 })).toEqual({ trimmed: 4, examined: 5 });
    expect((await h.store.jobHistory({ jobId: id })).map((entry) => entry.id)).toEqual([log.at(-1)!.id]);
  });
}
