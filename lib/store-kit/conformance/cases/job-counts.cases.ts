import { expect, it } from '@jest/globals';
import type { JobRecord } from '../../../core/index.js';
import type { JobStateCount, JobStore } from '../../../store/index.js';
import type { StoreUnderTest, SuiteContext } from '../harness.js';
import { claimOne, enqueue, LEASE_MS, mustGet } from './helpers.js';

const DAY = 86_400_000;

/** Every stored job, read page by page through the listing. */
async function allJobs(store: JobStore): Promise<JobRecord[]> {
  const jobs: JobRecord[] = [];
  let before: string | undefined;
  do {
    const page = await store.jobListPage({ limit: 1_000, before });
    jobs.push(...page.jobs);
    before = page.next ?? undefined;
  } while (before !== undefined);
  return jobs;
}

/** The counts the stored rows call for, in jobStats' order. */
async function countedFromRows(store: JobStore): Promise<JobStateCount[]> {
  const counts = new Map<string, JobStateCount>();
  for (const job of await allJobs(store)) {
    const key = `${job.queue}\u0000${job.state}`;
    const entry = counts.get(key) ?? { queue: job.queue, state: job.state, count: 0 };
    counts.set(key, { ...entry, count: entry.count + 1 });
  }
  return [...counts.values()].sort((a, b) => (a.queue < b.queue ? -1 : a.queue > b.queue ? 1 : a.state < b.state ? -1 : a.state > b.state ? 1 : 0));
}

/** The queue listing's counts, flattened like jobStats'. */
async function queueListCounts(store: JobStore): Promise<JobStateCount[]> {
  return (await store.queueList()).flatMap((queue) =>
    Object.entries(queue.counts)
      .map(([state, count]) => ({ queue: queue.name, state, count }) as JobStateCount)
      .sort((a, b) => (a.state < b.state ? -1 : 1)),
  );
}

/**
 * The counts jobStats and queueList report equal what the rows say: before any fold, after a
 * fold of one pending change, and after folding everything (a second full fold then finds nothing).
 */
async function expectExactCounts(h: StoreUnderTest, expected?: JobStateCount[]): Promise<void> {
  const truth = await countedFromRows(h.store);
  if (expected) expect(truth).toEqual(expected);
  expect((await h.store.jobStats()).counts).toEqual(truth);
  expect(await queueListCounts(h.store)).toEqual(truth);
  const one = await h.store.jobCountsFold({ limit: 1 });
  expect([0, 1]).toContain(one);
  expect((await h.store.jobStats()).counts).toEqual(truth);
  while ((await h.store.jobCountsFold({ limit: 100_000 })) > 0);
  expect(await h.store.jobCountsFold({ limit: 100_000 })).toBe(0);
  expect((await h.store.jobStats()).counts).toEqual(truth);
  expect(await queueListCounts(h.store)).toEqual(truth);
}

const c = (queue: string, state: JobStateCount['state'], count: number): JobStateCount => ({ queue, state, count });

export function jobCountCases(ctx: SuiteContext): void {
  it('counts stay exact through enqueue, claim, success, retry, dead-letter and quarantine', async () => {
    const h = await ctx.open();
    await expectExactCounts(h, []);
    const ok = await enqueue(h.store, { name: 'ok' });
    const retried = await enqueue(h.store, { name: 'retried', maxAttempts: 3 });
    const dead = await enqueue(h.store, { name: 'dead', maxAttempts: 1 });
    const odd = await enqueue(h.store, { name: 'odd' });
    await h.store.jobEnqueueMany({ jobs: [1, 2, 3].map((n) => ({ name: 'mail', payload: n, queue: 'mail' })) });
    await expectExactCounts(h, [c('default', 'scheduled', 4), c('mail', 'scheduled', 3)]);

    const claimed = await h.store.jobClaim({ workerId: 'w', limit: 10, queues: ['default'], leaseMs: LEASE_MS });
    expect(claimed).toHaveLength(4);
    await expectExactCounts(h, [c('default', 'running', 4), c('mail', 'scheduled', 3)]);

    await h.store.jobCompleteMany({
      workerId: 'w',
      outcomes: [
        { jobId: ok, attempt: 1, kind: 'succeeded' },
        { jobId: retried, attempt: 1, kind: 'failed', error: 'again', retryDelayMs: 0 },
        { jobId: dead, attempt: 1, kind: 'failed', error: 'last', retryDelayMs: 0 },
        { jobId: odd, attempt: 1, kind: 'quarantined', reason: 'no handler' },
      ],
    });
    await expectExactCounts(h, [
      c('default', 'dead_lettered', 1),
      c('default', 'quarantined', 1),
      c('default', 'scheduled', 1),
      c('default', 'succeeded', 1),
      c('mail', 'scheduled', 3),
    ]);

    // A heartbeat, and a claim of the retried job, change no count or the right two.
    const [again] = await h.store.jobClaim({ workerId: 'w', limit: 1, queues: ['default'], leaseMs: LEASE_MS });
    expect(again?.id).toBe(retried);
    await h.store.jobHeartbeat({ workerId: 'w', leases: [{ jobId: retried, attempt: 2 }], leaseMs: LEASE_MS });
    await expectExactCounts(h, [
      c('default', 'dead_lettered', 1),
      c('default', 'quarantined', 1),
      c('default', 'running', 1),
      c('default', 'succeeded', 1),
      c('mail', 'scheduled', 3),
    ]);

    // Replays of the dead-lettered and quarantined jobs, and a relinquish of the running one.
    await h.store.jobReplay({ jobId: dead });
    await h.store.jobReplay({ jobId: odd });
    await h.store.jobRelinquishMany({ workerId: 'w', leases: [{ jobId: retried, attempt: 2 }] });
    await expectExactCounts(h, [c('default', 'scheduled', 3), c('default', 'succeeded', 1), c('mail', 'scheduled', 3)]);
  });

  it('counts stay exact through cancels of waiting and running jobs', async () => {
    const h = await ctx.open();
    const waiting = await enqueue(h.store, { queue: 'q' });
    const running = await enqueue(h.store, { queue: 'q' });
    await h.store.jobCancel({ jobId: waiting });
    const job = await claimOne(h.store, 'w', ['q']);
    expect(job.id).toBe(running);
    await h.store.jobCancel({ jobId: running }); // a request: the job keeps running
    await expectExactCounts(h, [c('q', 'cancelled', 1), c('q', 'running', 1)]);
    await h.store.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId: running, attempt: 1, kind: 'failed', error: 'aborted', retryDelayMs: 0 }] });
    await expectExactCounts(h, [c('q', 'cancelled', 2)]);
  });

  it('counts stay exact as dependants wait, are released, and are cancelled in a cascade', async () => {
    const h = await ctx.open();
    const parent = await enqueue(h.store, { name: 'parent', queue: 'p' });
    const released = await enqueue(h.store, { name: 'released', queue: 'c', dependsOn: [parent] });
    const doomedParent = await enqueue(h.store, { name: 'doomed.parent', queue: 'p', maxAttempts: 1 });
    const doomed = await enqueue(h.store, { name: 'doomed', queue: 'c', dependsOn: [doomedParent] });
    await enqueue(h.store, { name: 'doomed.grandchild', queue: 'c', dependsOn: [doomed] });
    await expectExactCounts(h, [c('c', 'awaiting_parents', 3), c('p', 'scheduled', 2)]);

    const claimed = await h.store.jobClaim({ workerId: 'w', limit: 2, queues: ['p'], leaseMs: LEASE_MS });
    expect(claimed.map((j) => j.id).sort()).toEqual([parent, doomedParent].sort());
    await h.store.jobCompleteMany({
      workerId: 'w',
      outcomes: [
        { jobId: parent, attempt: 1, kind: 'succeeded' },
        { jobId: doomedParent, attempt: 1, kind: 'dead_lettered', error: 'no' },
      ],
    });
    while ((await h.store.jobSettleDependencies({ limit: 100 })) > 0);
    expect((await mustGet(h.store, released)).state).toBe('scheduled');
    await expectExactCounts(h, [c('c', 'cancelled', 2), c('c', 'scheduled', 1), c('p', 'dead_lettered', 1), c('p', 'succeeded', 1)]);
  });

  it('counts stay exact when the sweep settles lapsed leases and retention purges finished jobs', async () => {
    const h = await ctx.open();
    const lapsed = await enqueue(h.store, { name: 'lapsed', maxAttempts: 1 });
    const done = await enqueue(h.store, { name: 'done' });
    const kept = await enqueue(h.store, { name: 'kept', delayMs: 3 * DAY });
    await h.store.jobClaim({ workerId: 'w', limit: 2, queues: ['default'], leaseMs: LEASE_MS });
    await h.store.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId: done, attempt: 1, kind: 'succeeded' }] });
    await h.advance(LEASE_MS);
    expect(await h.store.jobExpireLeases({ limit: 10 })).toEqual([{ jobId: lapsed, attempt: 1, state: 'dead_lettered' }]);
    await expectExactCounts(h, [c('default', 'dead_lettered', 1), c('default', 'scheduled', 1), c('default', 'succeeded', 1)]);
    await h.advance(DAY + 1);
    expect(await h.store.jobPurge({ olderThanMs: DAY, limit: 100 })).toBe(1);
    expect(await h.store.jobGet({ jobId: done })).toBeNull();
    expect((await mustGet(h.store, kept)).state).toBe('scheduled');
    await expectExactCounts(h, [c('default', 'dead_lettered', 1), c('default', 'scheduled', 1)]);
  });

  it('leaves a queue whose jobs are all purged out of the counts, and lists it only while paused', async () => {
    const h = await ctx.open();
    const id = await enqueue(h.store, { queue: 'gone' });
    await h.store.jobCancel({ jobId: id });
    await h.store.queuePause({ queue: 'gone' });
    await h.advance(DAY + 1);
    expect(await h.store.jobPurge({ olderThanMs: DAY, limit: 100 })).toBe(1);
    await expectExactCounts(h, []);
    expect(await h.store.queueList()).toEqual([{ name: 'gone', paused: true, counts: {} }]);
  });

  it('counts minted occurrences and a replaced unique job once each', async () => {
    const h = await ctx.open();
    const { schedule } = await h.store.scheduleUpsert({ schedule: { name: 'tick', everyMs: 60_000, queue: 'ticks' } });
    await h.store.scheduleTrigger({ scheduleId: schedule.id });
    await h.store.jobEnqueue({ job: { name: 'debounced', payload: 1, uniqueKey: 'k', delayMs: 60_000 } });
    const second = await h.store.jobEnqueue({ job: { name: 'debounced', payload: 2, uniqueKey: 'k', uniqueKeyMode: 'replace', delayMs: 60_000 } });
    expect(second.deduplicated).toBe('replaced');
    await expectExactCounts(h, [c('default', 'scheduled', 1), c('ticks', 'scheduled', 1)]);
  });
}
