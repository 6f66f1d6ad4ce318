import { expect, it } from '@jest/globals';
import { SeededRandom, type JobRecord } from '../../../core/index.js';
import type { JobStore } from '../../../store/index.js';
import type { SuiteContext } from '../harness.js';
import { enqueue, LEASE_MS } from './helpers.js';

const claim = (store: JobStore, workerId: string, limit = 10) => store.jobClaim({ workerId, limit, queues: ['default'], leaseMs: LEASE_MS });
const finish = (store: JobStore, job: JobRecord) =>
  store.jobCompleteMany({ workerId: job.workerId!, outcomes: [{ jobId: job.id, attempt: job.attempt, kind: 'succeeded' }] });
const keyed = (store: JobStore, count: number, extra: { maxAttempts?: number } = {}) =>
  Promise.all(Array.from({ length: count }, (_, i) => enqueue(store, { concurrencyKey: 'k', payload: i, ...extra })));

/**
 * Issue 19 item 2: a limit set, lowered or raised while jobs run is never exceeded, because the
 * jobs already running count against it. Each case changes a limit between claims and outcomes and
 * checks every claim against what runs.
 */
export function limitChangeCases(ctx: SuiteContext): void {
  it('issue 19 item 2: a queue limit set while a job runs counts that job (the reported reproduction)', async () => {
    const h = await ctx.open();
    for (let i = 0; i < 3; i++) await enqueue(h.store, { payload: i });
    const first = await claim(h.store, 'w1', 1);
    expect(first).toHaveLength(1);
    await h.store.concurrencyLimitSet({ target: { queue: 'default' }, max: 1 });
    expect(await claim(h.store, 'w2')).toEqual([]);
    await finish(h.store, first[0]!);
    expect(await claim(h.store, 'w2')).toHaveLength(1);
    expect(await claim(h.store, 'w3')).toEqual([]);
  });

  it('issue 19 item 2: a key limit set below the jobs already running starts nothing until fewer than it run', async () => {
    const h = await ctx.open();
    await keyed(h.store, 5);
    const running = await claim(h.store, 'w1', 3);
    expect(running).toHaveLength(3);
    await h.store.concurrencyLimitSet({ target: { key: 'k' }, max: 2 });
    expect(await claim(h.store, 'w2')).toEqual([]);
    await finish(h.store, running[0]!);
    expect(await claim(h.store, 'w2')).toEqual([]);
    await finish(h.store, running[1]!);
    expect(await claim(h.store, 'w2')).toHaveLength(1);
    expect(await claim(h.store, 'w3')).toEqual([]);
  });

  it('issue 19 item 2: a limit lowered below its running jobs starts nothing, whichever of them finishes first', async () => {
    const h = await ctx.open();
    await h.store.concurrencyLimitSet({ target: { key: 'k' }, max: 3 });
    await keyed(h.store, 6);
    const running = await claim(h.store, 'w1');
    expect(running).toHaveLength(3);
    await h.store.concurrencyLimitSet({ target: { key: 'k' }, max: 1 });
    // The first job claimed finishes first: the room it leaves is still taken by the other two.
    await finish(h.store, running[0]!);
    expect(await claim(h.store, 'w2')).toEqual([]);
    await finish(h.store, running[1]!);
    expect(await claim(h.store, 'w2')).toEqual([]);
    await finish(h.store, running[2]!);
    expect(await claim(h.store, 'w2')).toHaveLength(1);
    expect(await claim(h.store, 'w3')).toEqual([]);
  });

  it('issue 19 item 2: after a lowering, a running job whose lease lapses makes room only once fewer than the cap run', async () => {
    const h = await ctx.open();
    await h.store.concurrencyLimitSet({ target: { key: 'k' }, max: 3 });
    // One attempt each, so a lapsed one is not claimed again; two more wait behind them.
    await keyed(h.store, 3, { maxAttempts: 1 });
    const running = await claim(h.store, 'w1');
    expect(running).toHaveLength(3);
    await keyed(h.store, 2);
    await h.store.concurrencyLimitSet({ target: { key: 'k' }, max: 1 });
    const beat = (jobs: JobRecord[]) => h.store.jobHeartbeat({ workerId: 'w1', leases: jobs.map((j) => ({ jobId: j.id, attempt: j.attempt })), leaseMs: LEASE_MS });
    // The first job's lease lapses while the other two are renewed.
    await h.advance(LEASE_MS / 2);
    expect((await beat(running.slice(1))).lost).toEqual([]);
    await h.advance(LEASE_MS / 2 + 1);
    expect(await claim(h.store, 'w2')).toEqual([]);
    // Then the second's: one still runs, which is the cap.
    expect((await beat(running.slice(2))).lost).toEqual([]);
    await h.advance(LEASE_MS / 2 + 1);
    expect(await claim(h.store, 'w2')).toEqual([]);
    await h.advance(LEASE_MS / 2);
    expect(await claim(h.store, 'w2')).toHaveLength(1);
    expect(await claim(h.store, 'w3')).toEqual([]);
  });

  it('issue 19 item 2: raising a lowered limit counts every job still running', async () => {
    const h = await ctx.open();
    await h.store.concurrencyLimitSet({ target: { key: 'k' }, max: 3 });
    await keyed(h.store, 8);
    const running = await claim(h.store, 'w1');
    expect(running).toHaveLength(3);
    await h.store.concurrencyLimitSet({ target: { key: 'k' }, max: 1 });
    await h.store.concurrencyLimitSet({ target: { key: 'k' }, max: 2 });
    expect(await claim(h.store, 'w2')).toEqual([]);
    await finish(h.store, running[0]!);
    expect(await claim(h.store, 'w2')).toEqual([]);
    await finish(h.store, running[1]!);
    expect(await claim(h.store, 'w2')).toHaveLength(1);
    // Two run (one from before, one new); a cap of 5 leaves room for three more.
    await h.store.concurrencyLimitSet({ target: { key: 'k' }, max: 5 });
    expect(await claim(h.store, 'w3')).toHaveLength(3);
    expect(await claim(h.store, 'w4')).toEqual([]);
  });

  it('issue 19 item 2: a limit removed and set again counts the jobs that started while it was gone', async () => {
    const h = await ctx.open();
    await h.store.concurrencyLimitSet({ target: { key: 'k' }, max: 1 });
    await keyed(h.store, 6);
    const first = await claim(h.store, 'w1');
    expect(first).toHaveLength(1);
    await h.store.concurrencyLimitSet({ target: { key: 'k' }, max: null });
    const more = await claim(h.store, 'w2', 2);
    expect(more).toHaveLength(2);
    await h.store.concurrencyLimitSet({ target: { key: 'k' }, max: 2 });
    expect(await claim(h.store, 'w3')).toEqual([]);
    await finish(h.store, more[1]!);
    expect(await claim(h.store, 'w3')).toEqual([]);
    await finish(h.store, first[0]!);
    expect(await claim(h.store, 'w3')).toHaveLength(1);
    expect(await claim(h.store, 'w4')).toEqual([]);
  });

  it("issue 19 item 2: a key limit declared at enqueue while that key's jobs run counts them", async () => {
    const h = await ctx.open();
    await keyed(h.store, 3);
    const running = await claim(h.store, 'w1', 2);
    expect(running).toHaveLength(2);
    await enqueue(h.store, { concurrencyKey: 'k', concurrencyLimit: 1, payload: 'declares' });
    expect(await h.store.concurrencyLimitList()).toEqual([{ key: 'k', max: 1 }]);
    expect(await claim(h.store, 'w2')).toEqual([]);
    await finish(h.store, running[0]!);
    expect(await claim(h.store, 'w2')).toEqual([]);
    await finish(h.store, running[1]!);
    expect(await claim(h.store, 'w2')).toHaveLength(1);
    expect(await claim(h.store, 'w3')).toEqual([]);
  });

  it('issue 19 item 2: a job counted when its limit was set keeps its room through heartbeats, and gives it back when relinquished or lapsed', async () => {
    const h = await ctx.open();
    await keyed(h.store, 2, { maxAttempts: 1 });
    const running = await claim(h.store, 'w1');
    expect(running).toHaveLength(2);
    await keyed(h.store, 3);
    await h.store.concurrencyLimitSet({ target: { key: 'k' }, max: 2 });
    await h.advance(LEASE_MS / 2);
    const beat = await h.store.jobHeartbeat({ workerId: 'w1', leases: running.map((j) => ({ jobId: j.id, attempt: j.attempt })), leaseMs: LEASE_MS });
    expect(beat.lost).toEqual([]);
    // Past the leases the two had when the limit was set: their renewed leases still count.
    await h.advance(LEASE_MS / 2 + 1);
    expect(await claim(h.store, 'w2')).toEqual([]);
    await h.store.jobRelinquishMany({ workerId: 'w1', leases: [{ jobId: running[0]!.id, attempt: running[0]!.attempt }] });
    const next = await claim(h.store, 'w2');
    expect(next).toHaveLength(1);
    expect(await claim(h.store, 'w3')).toEqual([]);
    // The other lapses (no heartbeat), which frees its room for the last job but one.
    await h.advance(LEASE_MS / 2);
    expect(await claim(h.store, 'w3')).toHaveLength(1);
    expect(await claim(h.store, 'w4')).toEqual([]);
  });

  it('issue 19 item 2: a seeded walk of limit changes, claims and outcomes never runs more than the cap, nor fewer when there is room', async () => {
    const h = await ctx.open();
    const random = new SeededRandom(0x19_02);
    let waiting = 40;
    await keyed(h.store, waiting);
    const running = new Map<string, JobRecord>();
    let capKey: number | null = null;
    let capQueue: number | null = null;
    const room = () => Math.max(0, Math.min(capKey ?? Infinity, capQueue ?? Infinity) - running.size);
    const pickCap = () => (random.next() < 0.2 ? null : 1 + random.nextInt(4));
    const trail: string[] = [];
    for (let step = 0; step < 90; step++) {
      const roll = random.next();
      if (roll < 0.35) {
        const limit = 1 + random.nextInt(3);
        const expected = Math.min(limit, waiting, room());
        const claimed = await claim(h.store, `w${step}`, limit);
        trail.push(`claim ${limit}: ${claimed.length}`);
        expect({ trail, claimed: claimed.length }).toEqual({ trail, claimed: expected });
        for (const job of claimed) running.set(job.id, job);
        waiting -= claimed.length;
      } else if (roll < 0.6) {
        const jobs = [...running.values()];
        if (jobs.length === 0) continue;
        const job = jobs[random.nextInt(jobs.length)]!;
        await finish(h.store, job);
        running.delete(job.id);
        trail.push('finish');
      } else if (roll < 0.78) {
        capKey = pickCap();
        await h.store.concurrencyLimitSet({ target: { key: 'k' }, max: capKey });
        trail.push(`key cap ${capKey} with ${running.size} running`);
      } else if (roll < 0.93) {
        capQueue = pickCap();
        await h.store.concurrencyLimitSet({ target: { queue: 'default' }, max: capQueue });
        trail.push(`queue cap ${capQueue} with ${running.size} running`);
      } else {
        // A job that declares the key's limit; it applies only while the key has none.
        const declared = 1 + random.nextInt(3);
        await enqueue(h.store, { concurrencyKey: 'k', concurrencyLimit: declared, payload: step });
        capKey ??= declared;
        waiting += 1;
        trail.push(`declare ${declared}: key cap ${capKey}`);
      }
    }
    // The walk went through every kind of change, with jobs running.
    expect(trail.filter((t) => / cap \d with [1-9]/.test(t)).length).toBeGreaterThan(5);
    expect(trail.some((t) => t.includes('cap null'))).toBe(true);
    expect(trail.filter((t) => /^claim \d: [1-9]/.test(t)).length).toBeGreaterThan(5);
  });
}
