import { expect, it } from '@jest/globals';
import type { JobRecord } from '../../../core/index.js';
import type { EnqueueInput, JobStore, LimitTarget } from '../../../store/index.js';
import type { SuiteContext } from '../harness.js';
import { enqueue, expectRefused, mustGet } from './helpers.js';

/** A lease longer than every window these cases cross, so no claimed job lapses unless a case means it to. */
const LONG_LEASE_MS = 3_600_000;
const WINDOW_MS = 10_000;

const take = (store: JobStore, limit = 50, queues = ['default'], workerId = 'w') => store.jobClaim({ workerId, limit, queues, leaseMs: LONG_LEASE_MS });
const idsOf = (jobs: readonly JobRecord[]) => jobs.map((job) => job.id);
/** When a claim leased the job, by the store's clock (its lease's end less the lease). */
const claimedAt = async (store: JobStore, id: string, leaseMs = LONG_LEASE_MS) => (await mustGet(store, id)).leasedUntil!.getTime() - leaseMs;
/** Enqueues one after another, so claim order is enqueue order. */
async function enqueueEach(store: JobStore, count: number, input: Partial<EnqueueInput> = {}): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) ids.push(await enqueue(store, { payload: i, ...input }));
  return ids;
}
const finish = (store: JobStore, job: JobRecord) => store.jobCompleteMany({ workerId: job.workerId!, outcomes: [{ jobId: job.id, attempt: job.attempt, kind: 'succeeded' }] });
const status = async (store: JobStore, target: LimitTarget) => {
  const read = await store.rateLimitStatus({ target });
  expect(read).not.toBeNull();
  return read!;
};

/**
 * Rate limits: at most `max` claims of a queue's or a concurrency key's jobs start in any window
 * of `perMs`, by the store's clock. The cases move the store's clock with `advance`; on the SQL
 * targets the real clock also runs on, so a "not yet" step leaves a margin of a second, while a
 * "now" step lands exactly on the boundary (real time passing only moves it further past).
 */
export function rateLimitCases(ctx: SuiteContext): void {
  it('starts at most max jobs in a window, and frees the next start exactly when the oldest is perMs old', async () => {
    const h = await ctx.open();
    await h.store.rateLimitSet({ target: { key: 'api' }, rate: { max: 2, perMs: WINDOW_MS } });
    const ids = await enqueueEach(h.store, 6, { concurrencyKey: 'api' });
    expect(await status(h.store, { key: 'api' })).toMatchObject({ max: 2, perMs: WINDOW_MS, startsInWindow: 0, fullUntil: null });

    expect(idsOf(await take(h.store, 1))).toEqual([ids[0]]);
    const one = await status(h.store, { key: 'api' });
    expect(one).toMatchObject({ startsInWindow: 1, fullUntil: null });
    expect(one.now.getTime()).toBeGreaterThanOrEqual(await claimedAt(h.store, ids[0]!));
    await h.advance(4_000);
    // A batch of 50 gets the one start left.
    expect(idsOf(await take(h.store))).toEqual([ids[1]]);
    expect(await take(h.store)).toEqual([]);
    const full = await status(h.store, { key: 'api' });
    expect(full.startsInWindow).toBe(2);
    expect(full.fullUntil?.getTime()).toBe((await claimedAt(h.store, ids[0]!)) + WINDOW_MS);
    expect(full.fullUntil!.getTime()).toBeGreaterThan(full.now.getTime());

    await h.advance(5_000);
    expect(await take(h.store)).toEqual([]);
    await h.advance(1_000);
    // The first start is exactly a window old: one start frees, the second is still 6 s into its window.
    expect(idsOf(await take(h.store))).toEqual([ids[2]]);
    expect(await take(h.store)).toEqual([]);
    const next = await status(h.store, { key: 'api' });
    expect(next.startsInWindow).toBe(2);
    expect(next.fullUntil?.getTime()).toBe((await claimedAt(h.store, ids[1]!)) + WINDOW_MS);
    await h.advance(4_000);
    expect(idsOf(await take(h.store))).toEqual([ids[3]]);
    await h.advance(WINDOW_MS);
    expect(idsOf(await take(h.store))).toEqual([ids[4], ids[5]]);
    expect(await status(h.store, { key: 'api' })).toMatchObject({ startsInWindow: 2 });
  });

  it("passes a rate-limited key's jobs over and still claims the jobs behind them, in claim order", async () => {
    const h = await ctx.open();
    await h.store.rateLimitSet({ target: { key: 'slow' }, rate: { max: 1, perMs: 60_000 } });
    const s1 = await enqueue(h.store, { concurrencyKey: 'slow' });
    const s2 = await enqueue(h.store, { concurrencyKey: 'slow' });
    const p1 = await enqueue(h.store);
    const s3 = await enqueue(h.store, { concurrencyKey: 'slow' });
    const k1 = await enqueue(h.store, { concurrencyKey: 'other' });
    const p2 = await enqueue(h.store);
    expect(idsOf(await take(h.store, 10))).toEqual([s1, p1, k1, p2]);
    expect(await take(h.store, 10)).toEqual([]);
    for (const id of [s2, s3]) expect((await mustGet(h.store, id)).state).toBe('scheduled');
  });

  it('does not let a key out of starts starve the jobs behind it, one claim at a time', async () => {
    const h = await ctx.open();
    await h.store.rateLimitSet({ target: { key: 'busy' }, rate: { max: 1, perMs: 60_000 } });
    await h.store.jobEnqueueMany({ jobs: Array.from({ length: 120 }, (_, i) => ({ name: 'test.job', payload: i, concurrencyKey: 'busy' })) });
    const late = await enqueue(h.store, { concurrencyKey: 'quiet' });
    expect(await take(h.store, 1)).toHaveLength(1);
    expect(idsOf(await take(h.store, 1))).toEqual([late]);
    expect(await take(h.store, 1)).toEqual([]);
  });

  it('limits a queue by rate, and applies a queue rate and a key rate together', async () => {
    const h = await ctx.open();
    await h.store.rateLimitSet({ target: { queue: 'mail' }, rate: { max: 3, perMs: WINDOW_MS } });
    await h.store.rateLimitSet({ target: { key: 'vip' }, rate: { max: 1, perMs: WINDOW_MS } });
    const v0 = await enqueue(h.store, { queue: 'mail', concurrencyKey: 'vip' });
    const v1 = await enqueue(h.store, { queue: 'mail', concurrencyKey: 'vip' });
    const [m0, m1, m2] = await enqueueEach(h.store, 3, { queue: 'mail' });
    const v2 = await enqueue(h.store, { queue: 'mail', concurrencyKey: 'vip' });
    const d0 = await enqueue(h.store);
    // v1 is passed over for its key, and so takes none of the queue's starts: m0 and m1 get them.
    expect(idsOf(await take(h.store, 10, ['mail', 'default']))).toEqual([v0, m0, m1, d0]);
    expect(await take(h.store, 10, ['mail', 'default'])).toEqual([]);
    expect(await status(h.store, { queue: 'mail' })).toMatchObject({ startsInWindow: 3 });
    expect(await status(h.store, { key: 'vip' })).toMatchObject({ startsInWindow: 1 });
    // Another queue is not limited by mail's rate.
    const other = await enqueue(h.store, { queue: 'sms' });
    expect(idsOf(await take(h.store, 10, ['mail', 'sms']))).toEqual([other]);

    await h.advance(WINDOW_MS);
    expect(idsOf(await take(h.store, 10, ['mail']))).toEqual([v1, m2]);
    expect((await mustGet(h.store, v2)).state).toBe('scheduled');
    expect(await status(h.store, { queue: 'mail' })).toMatchObject({ startsInWindow: 2, fullUntil: null });
    expect(await status(h.store, { key: 'vip' })).toMatchObject({ startsInWindow: 1 });
  });

  it('composes with a concurrency limit: a job needs room in both, and one held back by either takes no start', async () => {
    const h = await ctx.open();
    await h.store.concurrencyLimitSet({ target: { key: 'k' }, max: 1 });
    await h.store.rateLimitSet({ target: { key: 'k' }, rate: { max: 3, perMs: WINDOW_MS } });
    const ids = await enqueueEach(h.store, 5, { concurrencyKey: 'k' });
    const [first] = await take(h.store);
    expect(first?.id).toBe(ids[0]);
    // Held back by the concurrency limit: the rate limit's starts stay unused.
    expect(await take(h.store)).toEqual([]);
    expect(await status(h.store, { key: 'k' })).toMatchObject({ startsInWindow: 1 });
    await finish(h.store, first!);
    const [second] = await take(h.store);
    expect(second?.id).toBe(ids[1]);
    await finish(h.store, second!);
    const [third] = await take(h.store);
    expect(third?.id).toBe(ids[2]);
    await finish(h.store, third!);
    // Room under the concurrency limit, none under the rate limit.
    expect(await take(h.store)).toEqual([]);
    expect((await status(h.store, { key: 'k' })).fullUntil?.getTime()).toBe(first!.leasedUntil!.getTime() - LONG_LEASE_MS + WINDOW_MS);
    await h.advance(WINDOW_MS);
    expect(idsOf(await take(h.store))).toEqual([ids[3]]);
    // And the other way round: starts free, the concurrency limit full.
    expect(await take(h.store)).toEqual([]);
  });

  it("counts a lapsed lease's reclaim as a start", async () => {
    const h = await ctx.open();
    const leaseMs = 30_000;
    await h.store.rateLimitSet({ target: { key: 'k' }, rate: { max: 1, perMs: 100_000 } });
    const a = await enqueue(h.store, { concurrencyKey: 'k', maxAttempts: 3 });
    const b = await enqueue(h.store, { concurrencyKey: 'k' });
    const claim = () => h.store.jobClaim({ workerId: 'w2', limit: 10, queues: ['default'], leaseMs });
    expect(idsOf(await h.store.jobClaim({ workerId: 'crashed', limit: 10, queues: ['default'], leaseMs }))).toEqual([a]);
    await h.advance(leaseMs);
    // The lease lapsed, but the one start of the window is used.
    expect(await claim()).toEqual([]);
    await h.advance(70_000);
    const reclaimed = await claim();
    expect(reclaimed.map((job) => [job.id, job.attempt])).toEqual([[a, 2]]);
    // The reclaim took the start: b waits another window.
    expect(await claim()).toEqual([]);
    const after = await status(h.store, { key: 'k' });
    expect(after.startsInWindow).toBe(1);
    expect(after.fullUntil?.getTime()).toBe((await claimedAt(h.store, a, leaseMs)) + 100_000);
    expect((await mustGet(h.store, b)).state).toBe('scheduled');
  });

  it('counts a start whatever its attempt ends in: a failure, a dead letter or a relinquish gives nothing back', async () => {
    const h = await ctx.open();
    await h.store.rateLimitSet({ target: { key: 'k' }, rate: { max: 3, perMs: WINDOW_MS } });
    const [a, b, c, d] = await enqueueEach(h.store, 4, { concurrencyKey: 'k', maxAttempts: 3 });
    expect(idsOf(await take(h.store))).toEqual([a, b, c]);
    const outcomes = await h.store.jobCompleteMany({
      workerId: 'w',
      outcomes: [
        { jobId: a!, attempt: 1, kind: 'failed', error: 'boom', retryDelayMs: 0 },
        { jobId: b!, attempt: 1, kind: 'dead_lettered', error: 'gone' },
      ],
    });
    expect(outcomes.map((o) => o.status)).toEqual(['applied', 'applied']);
    expect((await h.store.jobRelinquishMany({ workerId: 'w', leases: [{ jobId: c!, attempt: 1 }] }))[0]!.status).toBe('applied');
    // a (failed, due again), c (relinquished) and d are due, but the window's three starts are used.
    expect(await take(h.store)).toEqual([]);
    expect(await status(h.store, { key: 'k' })).toMatchObject({ startsInWindow: 3 });
    await h.advance(WINDOW_MS);
    const next = await take(h.store);
    expect(new Set(idsOf(next))).toEqual(new Set([a, c, d]));
  });

  it('raised, adds unused starts; lowered, keeps the most recent starts', async () => {
    const h = await ctx.open();
    await h.store.rateLimitSet({ target: { key: 'k' }, rate: { max: 1, perMs: WINDOW_MS } });
    const ids = await enqueueEach(h.store, 9, { concurrencyKey: 'k' });
    expect(idsOf(await take(h.store))).toEqual([ids[0]]);
    await h.store.rateLimitSet({ target: { key: 'k' }, rate: { max: 3, perMs: WINDOW_MS } });
    expect(idsOf(await take(h.store))).toEqual([ids[1], ids[2]]);
    expect(await take(h.store)).toEqual([]);

    // Three starts used at 0 s. A window on, spread them: one claim each at 10, 13 and 16 s.
    await h.advance(WINDOW_MS);
    expect(idsOf(await take(h.store, 1))).toEqual([ids[3]]);
    await h.advance(3_000);
    expect(idsOf(await take(h.store, 1))).toEqual([ids[4]]);
    await h.advance(3_000);
    expect(idsOf(await take(h.store, 1))).toEqual([ids[5]]);
    // Lowered to 2: the starts at 13 and 16 s stay; the one at 10 s is dropped.
    await h.store.rateLimitSet({ target: { key: 'k' }, rate: { max: 2, perMs: WINDOW_MS } });
    const lowered = await status(h.store, { key: 'k' });
    expect(lowered).toMatchObject({ max: 2, startsInWindow: 2 });
    expect(lowered.fullUntil?.getTime()).toBe((await claimedAt(h.store, ids[4]!)) + WINDOW_MS);
    // At 20 s the dropped start would be a window old; the kept ones are not.
    await h.advance(4_000);
    expect(await take(h.store)).toEqual([]);
    // At 23 s the one from 13 s is.
    await h.advance(3_000);
    expect(idsOf(await take(h.store))).toEqual([ids[6]]);
    expect(await take(h.store)).toEqual([]);
  });

  it('applies a changed window to the starts already counted', async () => {
    const h = await ctx.open();
    await h.store.rateLimitSet({ target: { key: 'k' }, rate: { max: 1, perMs: 60_000 } });
    const ids = await enqueueEach(h.store, 4, { concurrencyKey: 'k' });
    expect(idsOf(await take(h.store))).toEqual([ids[0]]);
    await h.advance(WINDOW_MS);
    expect(await take(h.store)).toEqual([]);
    // Shortened to 10 s: the start made 10 s ago is free.
    await h.store.rateLimitSet({ target: { key: 'k' }, rate: { max: 1, perMs: WINDOW_MS } });
    expect(await status(h.store, { key: 'k' })).toMatchObject({ perMs: WINDOW_MS, startsInWindow: 0, fullUntil: null });
    expect(idsOf(await take(h.store))).toEqual([ids[1]]);
    // Lengthened to 60 s: the start just made holds the window for a minute.
    await h.store.rateLimitSet({ target: { key: 'k' }, rate: { max: 1, perMs: 60_000 } });
    const held = await status(h.store, { key: 'k' });
    expect(held.fullUntil?.getTime()).toBe((await claimedAt(h.store, ids[1]!)) + 60_000);
    await h.advance(30_000);
    expect(await take(h.store)).toEqual([]);
    await h.advance(30_000);
    expect(idsOf(await take(h.store))).toEqual([ids[2]]);
  });

  it('removed, limits nothing; set again, counts only the starts made from then on', async () => {
    const h = await ctx.open();
    await h.store.rateLimitSet({ target: { key: 'k' }, rate: { max: 1, perMs: 60_000 } });
    const ids = await enqueueEach(h.store, 6, { concurrencyKey: 'k' });
    expect(idsOf(await take(h.store))).toEqual([ids[0]]);
    await h.store.rateLimitSet({ target: { key: 'k' }, rate: null });
    expect(await h.store.rateLimitList()).toEqual([]);
    expect(await h.store.rateLimitStatus({ target: { key: 'k' } })).toBeNull();
    expect(idsOf(await take(h.store, 2))).toEqual([ids[1], ids[2]]);
    // A new limit: the three starts in the last minute are not its own.
    await h.store.rateLimitSet({ target: { key: 'k' }, rate: { max: 2, perMs: 60_000 } });
    expect(await status(h.store, { key: 'k' })).toMatchObject({ startsInWindow: 0, fullUntil: null });
    expect(idsOf(await take(h.store))).toEqual([ids[3], ids[4]]);
    expect(await take(h.store)).toEqual([]);
    // Removing a limit that is not there is not an error.
    await h.store.rateLimitSet({ target: { queue: 'none' }, rate: null });
  });

  it("declares a key's rate at enqueue when it has none; the first declaration stands, and it counts from then on", async () => {
    const h = await ctx.open();
    const running = await enqueueEach(h.store, 2, { concurrencyKey: 'acct' });
    expect(idsOf(await take(h.store))).toEqual(running);
    const a = await enqueue(h.store, { concurrencyKey: 'acct', rateLimit: { max: 1, perMs: 60_000 } });
    const b = await enqueue(h.store, { concurrencyKey: 'acct', rateLimit: { max: 5, perMs: 1_000 } });
    await enqueue(h.store, { concurrencyKey: 'acct' });
    expect(await h.store.rateLimitList()).toEqual([{ key: 'acct', max: 1, perMs: 60_000 }]);
    // The two jobs started before the declaration are not counted.
    expect(idsOf(await take(h.store))).toEqual([a]);
    expect(await take(h.store)).toEqual([]);
    expect((await mustGet(h.store, b)).state).toBe('scheduled');
    // An operator's rate stands over later declarations too.
    await h.store.rateLimitSet({ target: { key: 'acct' }, rate: { max: 2, perMs: 60_000 } });
    await enqueue(h.store, { concurrencyKey: 'acct', rateLimit: { max: 9, perMs: 9 } });
    expect(await h.store.rateLimitList()).toEqual([{ key: 'acct', max: 2, perMs: 60_000 }]);
    // In one batch, the first job's declaration is the one that stands.
    await h.store.jobEnqueueMany({
      jobs: [
        { name: 'test.job', payload: 1, concurrencyKey: 'batch', rateLimit: { max: 3, perMs: 5_000 } },
        { name: 'test.job', payload: 2, concurrencyKey: 'batch', rateLimit: { max: 7, perMs: 7_000 } },
      ],
    });
    expect(await h.store.rateLimitList()).toEqual([
      { key: 'acct', max: 2, perMs: 60_000 },
      { key: 'batch', max: 3, perMs: 5_000 },
    ]);
    // A declaration is not audited as an operator's change.
    expect((await h.store.auditList({ limit: 10 })).filter((entry) => entry.action === 'rate_limit.set')).toHaveLength(1);
  });

  it('lists rate limits sorted by target, as concurrencyLimitList does, and reads a missing one as null', async () => {
    const h = await ctx.open();
    const targets: LimitTarget[] = [{ queue: 'mail' }, { key: 'b' }, { queue: 'alerts' }, { key: 'a-1' }];
    for (const [i, target] of targets.entries()) {
      await h.store.rateLimitSet({ target, rate: { max: i + 1, perMs: 1_000 * (i + 1) } });
      await h.store.concurrencyLimitSet({ target, max: i + 1 });
    }
    const listed = await h.store.rateLimitList();
    expect(listed).toEqual([
      { key: 'a-1', max: 4, perMs: 4_000 },
      { key: 'b', max: 2, perMs: 2_000 },
      { queue: 'alerts', max: 3, perMs: 3_000 },
      { queue: 'mail', max: 1, perMs: 1_000 },
    ]);
    expect(listed.map(({ perMs: _perMs, ...limit }) => limit)).toEqual(await h.store.concurrencyLimitList());
    expect(await h.store.rateLimitStatus({ target: { key: 'none' } })).toBeNull();
    expect(await h.store.rateLimitStatus({ target: { queue: 'mail' } })).toMatchObject({ max: 1, perMs: 1_000, startsInWindow: 0, fullUntil: null });
  });

  it('audits each change under its actor, with the rate it set', async () => {
    const h = await ctx.open();
    await h.store.rateLimitSet({ target: { key: 'k' }, rate: { max: 2, perMs: 1_000 }, actor: 'ops' });
    expect((await h.store.auditList({ limit: 1 }))[0]).toMatchObject({ actor: 'ops', action: 'rate_limit.set', target: 'key:k', detail: { rate: { max: 2, perMs: 1_000 } } });
    await h.store.rateLimitSet({ target: { queue: 'mail' }, rate: { max: 5, perMs: 60_000 }, actor: 'ops' });
    expect((await h.store.auditList({ limit: 1 }))[0]).toMatchObject({ action: 'rate_limit.set', target: 'queue:mail', detail: { rate: { max: 5, perMs: 60_000 } } });
    await h.store.rateLimitSet({ target: { key: 'k' }, rate: null, actor: 'ops' });
    expect((await h.store.auditList({ limit: 1 }))[0]).toMatchObject({ actor: 'ops', action: 'rate_limit.set', target: 'key:k', detail: { rate: null } });
    expect(await h.store.auditList({ limit: 10 })).toHaveLength(3);
  });

  it.each<[string, (s: JobStore) => Promise<unknown>, RegExp]>([
    ['a max of 0', (s) => s.rateLimitSet({ target: { key: 'k' }, rate: { max: 0, perMs: 1_000 } }), /^rate\.max must be a whole number from 1 to 10000, got 0\.$/],
    ['a max above 10,000', (s) => s.rateLimitSet({ target: { key: 'k' }, rate: { max: 10_001, perMs: 1_000 } }), /^rate\.max must be a whole number from 1 to 10000/],
    ['a fractional max', (s) => s.rateLimitSet({ target: { key: 'k' }, rate: { max: 1.5, perMs: 1_000 } }), /^rate\.max must be a whole number/],
    ['a window of 0', (s) => s.rateLimitSet({ target: { key: 'k' }, rate: { max: 1, perMs: 0 } }), /^rate\.perMs must be a whole number from 1 to 86400000, got 0\.$/],
    ['a window over a day', (s) => s.rateLimitSet({ target: { key: 'k' }, rate: { max: 1, perMs: 86_400_001 } }), /^rate\.perMs must be a whole number from 1 to 86400000/],
    ['a window given as text', (s) => s.rateLimitSet({ target: { key: 'k' }, rate: { max: 1, perMs: '1000' as never } }), /^rate\.perMs must be a whole number/],
    ['an unknown key in the rate', (s) => s.rateLimitSet({ target: { key: 'k' }, rate: { max: 1, perMs: 1_000, burst: 2 } as never }), /^rate has an unknown key burst; it takes \{ max, perMs \}\.$/],
    ['a missing rate', (s) => s.rateLimitSet({ target: { key: 'k' } } as never), /^rate must be an object \{ max, perMs \}/],
    ['a rate without a target', (s) => s.rateLimitSet({ target: {} as never, rate: { max: 1, perMs: 1_000 } }), /^A rate limit needs a target: \{ queue \} or \{ key \}\.$/],
    ['a rate with no target at all', (s) => s.rateLimitSet({ rate: { max: 1, perMs: 1_000 } } as never), /^A rate limit needs a target/],
    ['a hostile queue name', (s) => s.rateLimitSet({ target: { queue: "x'; drop" }, rate: { max: 1, perMs: 1_000 } }), /queue must be 1 to 64 characters/],
    ['a rateLimit without a concurrencyKey', (s) => s.jobEnqueue({ job: { name: 'x', payload: 1, rateLimit: { max: 1, perMs: 1_000 } } }), /^rateLimit needs a concurrencyKey or a group\.$/],
    ['a rateLimit of max 0', (s) => s.jobEnqueue({ job: { name: 'x', payload: 1, concurrencyKey: 'k', rateLimit: { max: 0, perMs: 1_000 } } }), /^rateLimit\.max must be a whole number/],
    ['a rateLimit with an unknown key', (s) => s.jobEnqueue({ job: { name: 'x', payload: 1, concurrencyKey: 'k', rateLimit: { max: 1, per: 1_000 } as never } }), /^rateLimit has an unknown key per/],
    [
      'a batch whose second job has a bad rateLimit',
      (s) =>
        s.jobEnqueueMany({
          jobs: [
            { name: 'x', payload: 1, concurrencyKey: 'k', rateLimit: { max: 1, perMs: 1_000 } },
            { name: 'x', payload: 2, concurrencyKey: 'k', rateLimit: { max: 1, perMs: -1 } },
          ],
        }),
      /rateLimit\.perMs must be a whole number/,
    ],
    ['a status read without a target', (s) => s.rateLimitStatus({ target: {} as never }), /^A rate limit needs a target/],
  ])('refuses %s with a typed one-sentence error, writing nothing', async (_label, call, pattern) => {
    const h = await ctx.open();
    await h.store.rateLimitSet({ target: { key: 'kept' }, rate: { max: 2, perMs: 1_000 } });
    const before = await h.snapshot();
    await expectRefused(() => call(h.store), pattern);
    expect(await h.snapshot()).toEqual(before);
    expect(await h.store.rateLimitList()).toEqual([{ key: 'kept', max: 2, perMs: 1_000 }]);
    expect(await h.store.auditList({ limit: 10 })).toHaveLength(1);
    expect(await h.countJobs()).toBe(0);
  });

  it('gives a rate-limited key its starts in priority order, and passes over the rest for jobs of later priorities', async () => {
    const h = await ctx.open();
    await h.store.rateLimitSet({ target: { key: 'k' }, rate: { max: 2, perMs: WINDOW_MS } });
    const kLow = await enqueue(h.store, { concurrencyKey: 'k', priority: 5 });
    const kMid = await enqueue(h.store, { concurrencyKey: 'k', priority: 0 });
    const plainLow = await enqueue(h.store, { priority: 3 });
    const kHigh = await enqueue(h.store, { concurrencyKey: 'k', priority: -5 });
    const plainUrgent = await enqueue(h.store, { priority: -8 });
    expect(idsOf(await take(h.store, 2))).toEqual([plainUrgent, kHigh]);
    expect(idsOf(await take(h.store, 10))).toEqual([kMid, plainLow]);
    expect(await take(h.store, 10)).toEqual([]);
    await h.advance(WINDOW_MS);
    expect(idsOf(await take(h.store, 10))).toEqual([kLow]);
  });

  it('holds across claims made at once: eight claimers together start no more than max, and a later claim finds what is left', async () => {
    const h = await ctx.open();
    await h.store.rateLimitSet({ target: { key: 'hot' }, rate: { max: 3, perMs: 60_000 } });
    await h.store.rateLimitSet({ target: { queue: 'bulk' }, rate: { max: 5, perMs: 60_000 } });
    await h.store.jobEnqueueMany({ jobs: Array.from({ length: 20 }, (_, i) => ({ name: 'test.job', payload: i, concurrencyKey: 'hot' })) });
    await h.store.jobEnqueueMany({ jobs: Array.from({ length: 20 }, (_, i) => ({ name: 'test.job', payload: i, queue: 'bulk' })) });
    const claims = await Promise.all(Array.from({ length: 8 }, (_, i) => take(h.store, 4, ['default', 'bulk'], `w${i}`)));
    const claimed = claims.flat();
    expect(new Set(idsOf(claimed)).size).toBe(claimed.length);
    expect(claimed.filter((job) => job.concurrencyKey === 'hot').length).toBeLessThanOrEqual(3);
    expect(claimed.filter((job) => job.queue === 'bulk').length).toBeLessThanOrEqual(5);
    const rest = await take(h.store, 50, ['default', 'bulk'], 'late');
    expect([...claimed, ...rest].filter((job) => job.concurrencyKey === 'hot')).toHaveLength(3);
    expect([...claimed, ...rest].filter((job) => job.queue === 'bulk')).toHaveLength(5);
    expect(await status(h.store, { key: 'hot' })).toMatchObject({ startsInWindow: 3 });
  });

  it("counts every worker's claims against one window", async () => {
    const h = await ctx.open();
    await h.store.rateLimitSet({ target: { queue: 'default' }, rate: { max: 2, perMs: WINDOW_MS } });
    await enqueueEach(h.store, 4);
    expect(await take(h.store, 1, ['default'], 'w1')).toHaveLength(1);
    expect(await take(h.store, 5, ['default'], 'w2')).toHaveLength(1);
    expect(await take(h.store, 5, ['default'], 'w3')).toEqual([]);
  });
}
