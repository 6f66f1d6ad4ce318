import { expect, it } from '@jest/globals';
import { SeededRandom } from '../../../core/index.js';
import { OBSERVER_LAG_LIMIT, type JobStore, type ObserverStatus } from '../../../store/index.js';
import { ObserverDispatcher, type Timers, type TransitionEvent } from '../../../worker/index.js';
import type { SuiteContext } from '../harness.js';
import { enqueue, expectRefused, LEASE_MS } from './helpers.js';

const noTimers: Timers = { setTimeout: () => 0, clearTimeout: () => undefined };
const silent = { log: () => undefined, warn: () => undefined, error: () => undefined };

async function statusOf(store: JobStore, observer: string): Promise<ObserverStatus> {
  const found = (await store.observerList({ limit: 1_000 })).find((status) => status.observer === observer);
  expect(found).toBeDefined();
  return found!;
}

/** The cursor fields an operator sees when nothing is leased or failing. */
const idle = { leasedBy: null, leasedUntil: null, failures: 0, retryAt: null, lastError: null };

export function observerListCases(ctx: SuiteContext): void {
  it('observerList shows a new observer\'s backlog and its oldest entry, falling to nothing as its cursor commits', async () => {
    const h = await ctx.open();
    expect(await h.store.observerList()).toEqual([]);
    const start = await h.store.observerLease({ observer: 'audit', workerId: 'w', leaseMs: LEASE_MS });
    await h.advance(LEASE_MS);
    await enqueue(h.store, { name: 'a' });
    await h.advance(1_000);
    await enqueue(h.store, { name: 'b' });
    await enqueue(h.store, { name: 'c' });
    const log = await h.store.historyRead({ after: start!.position, limit: 100 });
    expect(log).toHaveLength(3);

    const backlog = await statusOf(h.store, 'audit');
    expect(backlog).toEqual({
      observer: 'audit',
      position: start!.position,
      ...idle,
      updatedAt: backlog.updatedAt,
      lagEntries: 3,
      lagCapped: false,
      oldestUndeliveredAt: log[0]!.at,
    });
    expect(backlog.updatedAt).toBeInstanceOf(Date);

    // A second observer starts at the end of the log: nothing behind it. Listed by id.
    await h.store.observerLease({ observer: 'billing', workerId: 'w', leaseMs: LEASE_MS });
    const both = await h.store.observerList();
    expect(both.map((s) => [s.observer, s.lagEntries, s.oldestUndeliveredAt])).toEqual([
      ['audit', 3, log[0]!.at],
      ['billing', 0, null],
    ]);
    expect((await h.store.observerList({ limit: 1 })).map((s) => s.observer)).toEqual(['audit']);

    await h.advance(LEASE_MS);
    await h.store.observerLease({ observer: 'audit', workerId: 'w', leaseMs: LEASE_MS });
    expect(await h.store.observerCommit({ observer: 'audit', workerId: 'w', position: log[0]!.position })).toBe(true);
    expect(await statusOf(h.store, 'audit')).toMatchObject({ position: log[0]!.position, lagEntries: 2, lagCapped: false, oldestUndeliveredAt: log[1]!.at });
    expect(await h.store.observerCommit({ observer: 'audit', workerId: 'w', position: log[2]!.position })).toBe(true);
    expect(await statusOf(h.store, 'audit')).toMatchObject({ position: log[2]!.position, lagEntries: 0, lagCapped: false, oldestUndeliveredAt: null });
  });

  it('observerList\'s lag is what the observer is then fed, every entry counted whatever its filters', async () => {
    const h = await ctx.open();
    const delivered: TransitionEvent[] = [];
    const dispatcher = new ObserverDispatcher({
      store: h.store,
      observers: [{ id: 'mailer', to: ['succeeded'], deliver: (event) => void delivered.push(event) }],
      timers: noTimers,
      logger: silent,
      random: new SeededRandom(7n),
      options: { workerId: 'node-a', pollIntervalMs: 1_000, leaseMs: LEASE_MS, batchSize: 2, retry: { baseDelayMs: 1_000, maxDelayMs: 60_000, jitter: false } },
    });
    await dispatcher.register();
    for (let i = 0; i < 3; i++) await enqueue(h.store, { name: `job.${i}` });
    const claimed = await h.store.jobClaim({ workerId: 'w', limit: 3, queues: ['default'], leaseMs: LEASE_MS });
    await h.store.jobCompleteMany({ workerId: 'w', outcomes: claimed.map((j) => ({ jobId: j.id, attempt: j.attempt, kind: 'succeeded' as const })) });
    const before = await statusOf(h.store, 'mailer');
    const unread = await h.store.historyRead({ after: before.position, limit: 100 });
    expect(unread).toHaveLength(9);
    expect(before).toMatchObject({ lagEntries: 9, oldestUndeliveredAt: unread[0]!.at });

    expect(await dispatcher.runOnce()).toBe(3);
    const after = await statusOf(h.store, 'mailer');
    expect(after).toMatchObject({ position: unread.at(-1)!.position, leasedBy: 'node-a', lagEntries: 0, lagCapped: false, oldestUndeliveredAt: null });
  });

  it('observerList shows a live delivery lease, then a failed delivery\'s count, backoff and error until a commit clears them', async () => {
    const h = await ctx.open();
    await h.store.observerLease({ observer: 'o', workerId: 'w1', leaseMs: LEASE_MS });
    const leased = await statusOf(h.store, 'o');
    expect(leased).toMatchObject({ leasedBy: 'w1', failures: 0, retryAt: null, lastError: null });
    expect(leased.leasedUntil!.getTime() - leased.updatedAt.getTime()).toBe(LEASE_MS);

    // A lapsed lease is nobody's: nothing is being delivered.
    await h.advance(LEASE_MS);
    expect(await statusOf(h.store, 'o')).toMatchObject({ leasedBy: null, leasedUntil: null });

    await enqueue(h.store);
    await h.store.observerLease({ observer: 'o', workerId: 'w2', leaseMs: LEASE_MS });
    expect(await h.store.observerFail({ observer: 'o', workerId: 'w2', error: 'webhook down', retryDelayMs: 10_000 })).toBe(true);
    const failed = await statusOf(h.store, 'o');
    expect(failed).toMatchObject({ leasedBy: null, leasedUntil: null, failures: 1, lastError: 'webhook down', lagEntries: 1 });
    expect(failed.retryAt!.getTime() - failed.updatedAt.getTime()).toBe(10_000);

    // The retry takes the lease; the backoff it waited out is still shown, and a second failure counts.
    await h.advance(10_000);
    await h.store.observerLease({ observer: 'o', workerId: 'w3', leaseMs: LEASE_MS });
    expect(await statusOf(h.store, 'o')).toMatchObject({ leasedBy: 'w3', failures: 1, lastError: 'webhook down' });
    expect(await h.store.observerFail({ observer: 'o', workerId: 'w3', error: 'still down', retryDelayMs: 20_000 })).toBe(true);
    expect(await statusOf(h.store, 'o')).toMatchObject({ failures: 2, lastError: 'still down' });

    await h.advance(20_000);
    const lease = await h.store.observerLease({ observer: 'o', workerId: 'w4', leaseMs: LEASE_MS });
    const [entry] = await h.store.historyRead({ after: lease!.position, limit: 1 });
    expect(await h.store.observerCommit({ observer: 'o', workerId: 'w4', position: entry!.position })).toBe(true);
    expect(await statusOf(h.store, 'o')).toMatchObject({ leasedBy: 'w4', failures: 0, retryAt: null, lastError: null, lagEntries: 0 });
  });

  it(`observerList counts at most ${OBSERVER_LAG_LIMIT} entries behind an observer and says when there are more`, async () => {
    const h = await ctx.open();
    const start = await h.store.observerLease({ observer: 'slow', workerId: 'w', leaseMs: LEASE_MS });
    for (let n = 0; n < OBSERVER_LAG_LIMIT; n += 1_000) {
      await h.store.jobEnqueueMany({ jobs: Array.from({ length: 1_000 }, (_, i) => ({ name: 'bulk', payload: n + i })) });
    }
    const [first] = await h.store.historyRead({ after: start!.position, limit: 1 });
    expect(await statusOf(h.store, 'slow')).toMatchObject({ lagEntries: OBSERVER_LAG_LIMIT, lagCapped: false, oldestUndeliveredAt: first!.at });

    await enqueue(h.store);
    expect(await statusOf(h.store, 'slow')).toMatchObject({ lagEntries: OBSERVER_LAG_LIMIT, lagCapped: true, oldestUndeliveredAt: first!.at });

    await h.store.observerLease({ observer: 'slow', workerId: 'w', leaseMs: LEASE_MS });
    expect(await h.store.observerCommit({ observer: 'slow', workerId: 'w', position: first!.position })).toBe(true);
    expect(await statusOf(h.store, 'slow')).toMatchObject({ lagEntries: OBSERVER_LAG_LIMIT, lagCapped: false });
  });

  it('observerList refuses a limit outside 1 to 1,000, or params that are not an object, with one sentence and nothing changed', async () => {
    const h = await ctx.open();
    await h.store.observerLease({ observer: 'o', workerId: 'w', leaseMs: LEASE_MS });
    await enqueue(h.store);
    const before = await h.snapshot();
    const list = h.store.observerList.bind(h.store) as (params: unknown) => Promise<unknown>;
    for (const limit of [0, 1_001, 1.5, -1, Number.NaN, '10']) {
      await expectRefused(() => list({ limit }), /^limit must be a whole number from 1 to 1000/);
    }
    await expectRefused(() => list(null), /^observerList takes a params object like \{ limit\? \}, got null\.$/);
    await expectRefused(() => list('audit'), /^observerList takes a params object like \{ limit\? \}, got "audit"\.$/);
    await expectRefused(() => list([]), /^observerList takes a params object like \{ limit\? \}, got an array\.$/);
    expect(await h.snapshot()).toEqual(before);
    expect(await h.store.observerList({ limit: 1_000 })).toHaveLength(1);
  });
}
