import { expect, it } from '@jest/globals';
import { SeededRandom, type JobState } from '../../../core/index.js';
import type { JobStore } from '../../../store/index.js';
import { ObserverDispatcher, type Timers, type TransitionEvent, type TransitionObserver } from '../../../worker/index.js';
import type { SuiteContext } from '../harness.js';
import { enqueue, LEASE_MS } from './helpers.js';

// Delivery timeouts never fire here: a hung delivery stays hung, as in a frozen process.
const noTimers: Timers = { setTimeout: () => 0, clearTimeout: () => undefined };
const silent = { log: () => undefined, warn: () => undefined, error: () => undefined };
const ALL: JobState[] = ['awaiting_parents', 'scheduled', 'running', 'succeeded', 'dead_lettered', 'cancelled', 'quarantined'];

function dispatcher(store: JobStore, workerId: string, observer: TransitionObserver, batchSize = 100) {
  return new ObserverDispatcher({
    store,
    observers: [observer],
    timers: noTimers,
    logger: silent,
    random: new SeededRandom(7n),
    options: { workerId, pollIntervalMs: 1_000, leaseMs: LEASE_MS, batchSize, retry: { baseDelayMs: 1_000, maxDelayMs: 60_000, jitter: false } },
  });
}

/** Three jobs run to success: nine transitions (scheduled, running, succeeded each). */
async function runThreeJobs(store: JobStore): Promise<void> {
  for (let i = 0; i < 3; i++) await enqueue(store, { name: `job.${i}`, payload: i });
  const claimed = await store.jobClaim({ workerId: 'w', limit: 3, queues: ['default'], leaseMs: LEASE_MS });
  await store.jobCompleteMany({ workerId: 'w', outcomes: claimed.map((j) => ({ jobId: j.id, attempt: j.attempt, kind: 'succeeded' as const })) });
}

export function observerCases(ctx: SuiteContext): void {
  it('delivers every transition at least once across a dispatcher that dies mid-batch, and ignores its late commit', async () => {
    const h = await ctx.open();
    const seenByA: TransitionEvent[] = [];
    let unfreeze!: () => void;
    const frozen = new Promise<void>((resolve) => (unfreeze = resolve));
    let fourthArrived!: () => void;
    const fourth = new Promise<void>((resolve) => (fourthArrived = resolve));
    const a = dispatcher(h.store, 'node-a', {
      id: 'audit',
      to: ALL,
      deliver: async (event) => {
        seenByA.push(event);
        if (seenByA.length === 4) {
          fourthArrived();
          await frozen; // dies here: no commit, no failure report
        }
      },
    });
    expect(await a.runOnce()).toBe(0); // registers the cursor at the (empty) end of the log
    await runThreeJobs(h.store);
    const log = await h.store.historyRead({ limit: 100 });
    expect(log).toHaveLength(9);

    const dying = a.runOnce();
    // Signalled by the delivery itself: counting event-loop turns instead gave up too early on a
    // loaded machine, where reading the log takes longer than a thousand turns.
    await fourth;
    expect(seenByA).toHaveLength(4);
    const seenByB: TransitionEvent[] = [];
    const b = dispatcher(h.store, 'node-b', { id: 'audit', to: ALL, deliver: (event) => void seenByB.push(event) });
    expect(await b.runOnce()).toBe(0); // A still holds the delivery lease
    await h.advance(LEASE_MS);
    expect(await b.runOnce()).toBe(9);
    // B starts from the last commit, so what A delivered before dying comes again, same ids.
    expect(seenByB.map((e) => e.eventId)).toEqual(log.map((e) => String(e.id)));
    expect(seenByA.map((e) => e.eventId)).toEqual(seenByB.slice(0, 4).map((e) => e.eventId));
    expect(seenByB.map((e) => [e.jobId, e.name, e.state, e.attempt])).toEqual(log.map((e) => [e.jobId, e.name, e.state, e.attempt]));

    // A wakes up and finishes its batch, but its commit is refused: the cursor stays B's.
    unfreeze();
    await dying;
    await runThreeJobs(h.store);
    await h.advance(LEASE_MS);
    seenByB.length = 0;
    expect(await b.runOnce()).toBe(9);
    expect(seenByB.map((e) => e.name)).toEqual(expect.arrayContaining(['job.0', 'job.1', 'job.2']));
    expect(seenByB.every((e) => !log.some((old) => String(old.id) === e.eventId))).toBe(true);
  });

  it('redelivers from a failed event after a backoff, without repeating the events before it', async () => {
    const h = await ctx.open();
    const seen: string[] = [];
    let failOnce = true;
    const d = dispatcher(h.store, 'node-a', {
      id: 'mailer',
      to: ['succeeded'],
      deliver: (event) => {
        if (event.name === 'job.1' && failOnce) {
          failOnce = false;
          throw new Error('smtp down');
        }
        seen.push(event.name);
      },
    });
    await d.runOnce();
    await runThreeJobs(h.store);
    expect(await d.runOnce()).toBe(1);
    expect(seen).toEqual(['job.0']);
    expect(await d.runOnce()).toBe(0); // backing off: failures 1 waits 2 s without jitter
    await h.advance(2_000);
    expect(await d.runOnce()).toBe(2);
    expect(seen).toEqual(['job.0', 'job.1', 'job.2']);
  });

  it('delivers only the states and job names an observer asks for, as frozen events', async () => {
    const h = await ctx.open();
    const seen: TransitionEvent[] = [];
    const d = dispatcher(h.store, 'node-a', { id: 'only-job-2', jobs: ['job.2'], to: ['running', 'succeeded'], deliver: (e) => void seen.push(e) }, 2);
    await d.runOnce();
    await runThreeJobs(h.store);
    // A batch of two entries at a time still reaches the end of the log in one pass.
    expect(await d.runOnce()).toBe(2);
    expect(seen.map((e) => [e.name, e.state])).toEqual([
      ['job.2', 'running'],
      ['job.2', 'succeeded'],
    ]);
    expect(Object.isFrozen(seen[0])).toBe(true);
    expect(await d.runOnce()).toBe(0);
  });
}
