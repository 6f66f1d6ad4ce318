import { expect, it } from '@jest/globals';
import { DUE_SCAN_LIMIT, type JobStore } from '../../../store/index.js';
import type { SuiteContext } from '../harness.js';
import { enqueue, LEASE_MS, mustGet } from './helpers.js';

const MINUTE = 60_000;

const byId = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Claims every due job of `queue` for worker `w` and returns them. */
async function claimAll(store: JobStore, queue = 'default', limit = 10) {
  return store.jobClaim({ workerId: 'w', limit, queues: [queue], leaseMs: LEASE_MS });
}

export function operatorReadCases(ctx: SuiteContext): void {
  it('jobEdges shows parents and dependants with their state, and which edges are settled and satisfied', async () => {
    const h = await ctx.open();
    const a = await enqueue(h.store, { name: 'parent.a', queue: 'p' });
    const b = await enqueue(h.store, { name: 'parent.b', queue: 'p', maxAttempts: 1 });
    const c = await enqueue(h.store, { name: 'child.c', queue: 'c', dependsOn: [a, b] });
    const d = await enqueue(h.store, { name: 'child.d', queue: 'c', dependsOn: [a], dependencyMode: 'on_any_terminal' });

    const open = { settled: false, satisfied: false, sequence: null, traceContext: null };
    expect(await h.store.jobEdges({ jobId: c })).toEqual({
      parents: [
        { id: a, name: 'parent.a', queue: 'p', state: 'scheduled', ...open },
        { id: b, name: 'parent.b', queue: 'p', state: 'scheduled', ...open },
      ].sort((x, y) => byId(x.id, y.id)),
      parentsTruncated: false,
      dependants: [],
      dependantsTruncated: false,
    });
    expect(await h.store.jobEdges({ jobId: a })).toEqual({
      parents: [],
      parentsTruncated: false,
      dependants: [
        { id: c, name: 'child.c', queue: 'c', state: 'awaiting_parents', ...open },
        { id: d, name: 'child.d', queue: 'c', state: 'awaiting_parents', ...open },
      ].sort((x, y) => byId(x.id, y.id)),
      dependantsTruncated: false,
    });

    // a succeeds: both its edges count. b is dead-lettered: its edge settles without releasing c, which is cancelled.
    const claimed = await claimAll(h.store, 'p');
    expect(claimed.map((job) => job.id)).toEqual([a, b]);
    await h.store.jobCompleteMany({
      workerId: 'w',
      outcomes: [
        { jobId: a, attempt: 1, kind: 'succeeded' },
        { jobId: b, attempt: 1, kind: 'dead_lettered', error: 'boom' },
      ],
    });
    const edgesOfC = await h.store.jobEdges({ jobId: c });
    expect(edgesOfC!.parents).toEqual(
      [
        { id: a, name: 'parent.a', queue: 'p', state: 'succeeded', settled: true, satisfied: true, sequence: null, traceContext: null },
        { id: b, name: 'parent.b', queue: 'p', state: 'dead_lettered', settled: true, satisfied: false, sequence: null, traceContext: null },
      ].sort((x, y) => byId(x.id, y.id)),
    );
    expect((await h.store.jobEdges({ jobId: b }))!.dependants).toEqual([{ id: c, name: 'child.c', queue: 'c', state: 'cancelled', settled: true, satisfied: false, sequence: null, traceContext: null }]);
    expect((await h.store.jobEdges({ jobId: d }))!.parents).toEqual([{ id: a, name: 'parent.a', queue: 'p', state: 'succeeded', settled: true, satisfied: true, sequence: null, traceContext: null }]);
    expect((await mustGet(h.store, d)).state).toBe('scheduled');

    // A job without edges has two empty sides; an id no job has reads as null.
    const lone = await enqueue(h.store);
    expect(await h.store.jobEdges({ jobId: lone })).toEqual({ parents: [], parentsTruncated: false, dependants: [], dependantsTruncated: false });
    expect(await h.store.jobEdges({ jobId: '0190a5a0-0000-7000-8000-00000000beef' })).toBeNull();
  });

  it('jobEdges returns at most limit edges per side and says when there were more', async () => {
    const h = await ctx.open();
    const parents: string[] = [];
    for (let i = 0; i < 3; i++) parents.push(await enqueue(h.store, { queue: 'p' }));
    const hub = parents[0]!;
    const children = (await h.store.jobEnqueueMany({ jobs: Array.from({ length: 5 }, () => ({ name: 'child', payload: 1, dependsOn: [hub] })) })).map((r) => r.id);
    const many = await enqueue(h.store, { dependsOn: parents });

    const cut = await h.store.jobEdges({ jobId: hub, limit: 2 });
    expect(cut!.dependants).toHaveLength(2);
    expect(cut!.dependantsTruncated).toBe(true);
    expect(cut!.dependants.every((edge) => [...children, many].includes(edge.id))).toBe(true);
    expect(cut!.dependants.map((edge) => edge.id)).toEqual(cut!.dependants.map((edge) => edge.id).sort(byId));

    const whole = await h.store.jobEdges({ jobId: hub, limit: 6 });
    expect(whole!.dependants.map((edge) => edge.id)).toEqual([...children, many].sort(byId));
    expect(whole!.dependantsTruncated).toBe(false);
    // The default limit (100) covers them all.
    expect((await h.store.jobEdges({ jobId: hub }))!.dependants).toHaveLength(6);

    const up = await h.store.jobEdges({ jobId: many, limit: 2 });
    expect(up!.parents).toHaveLength(2);
    expect(up!.parentsTruncated).toBe(true);
    expect(up!.parents.every((edge) => parents.includes(edge.id))).toBe(true);
    expect((await h.store.jobEdges({ jobId: many, limit: 3 }))!.parentsTruncated).toBe(false);
  });

  it('limitHolders lists the running jobs holding a queue limit or a key limit, with live leases only', async () => {
    const h = await ctx.open();
    await h.store.concurrencyLimitSet({ target: { queue: 'q' }, max: 2 });
    for (let i = 0; i < 3; i++) await enqueue(h.store, { name: `job.${i}`, queue: 'q' });
    const running = await claimAll(h.store, 'q');
    expect(running).toHaveLength(2);

    const held = await h.store.limitHolders({ target: { queue: 'q' } });
    expect(held.max).toBe(2);
    expect(held.truncated).toBe(false);
    const want = running
      .map((job) => ({ jobId: job.id, name: job.name, queue: 'q', workerId: 'w', attempt: 1, leasedUntil: job.leasedUntil }))
      .sort((x, y) => x.leasedUntil!.getTime() - y.leasedUntil!.getTime() || byId(x.jobId, y.jobId));
    expect(held.holders).toEqual(want);
    expect(await h.store.limitHolders({ target: { queue: 'q' }, limit: 1 })).toEqual({ max: 2, holders: [want[0]], truncated: true });

    // A concurrency key's limit, on jobs of another queue.
    await h.store.concurrencyLimitSet({ target: { key: 'tenant-1' }, max: 5 });
    const keyed = await enqueue(h.store, { name: 'keyed', queue: 'k', concurrencyKey: 'tenant-1' });
    await enqueue(h.store, { name: 'other', queue: 'k', concurrencyKey: 'tenant-2' });
    const [claimedKeyed] = await claimAll(h.store, 'k', 1);
    expect(claimedKeyed!.id).toBe(keyed);
    expect(await h.store.limitHolders({ target: { key: 'tenant-1' } })).toEqual({
      max: 5,
      holders: [{ jobId: keyed, name: 'keyed', queue: 'k', workerId: 'w', attempt: 1, leasedUntil: claimedKeyed!.leasedUntil }],
      truncated: false,
    });

    // No limit: nothing holds a slot, even where jobs run.
    expect(await h.store.limitHolders({ target: { queue: 'k' } })).toEqual({ max: null, holders: [], truncated: false });

    // A finished job gives its slot back; a lapsed lease holds none.
    await h.store.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId: want[0]!.jobId, attempt: 1, kind: 'succeeded' }] });
    expect((await h.store.limitHolders({ target: { queue: 'q' } })).holders.map((holder) => holder.jobId)).toEqual([want[1]!.jobId]);
    await h.advance(LEASE_MS + 1);
    expect(await h.store.limitHolders({ target: { queue: 'q' } })).toEqual({ max: 2, holders: [], truncated: false });
  });

  it('queueOldestDue reports each queue’s oldest due job and its due count, in the order asked', async () => {
    const h = await ctx.open();
    const a1 = await enqueue(h.store, { queue: 'a' });
    await h.advance(10_000);
    const a2 = await enqueue(h.store, { queue: 'a' });
    const b1 = await enqueue(h.store, { queue: 'b' });
    await enqueue(h.store, { queue: 'later', delayMs: 3_600_000 });
    await enqueue(h.store, { queue: 'busy' });
    await claimAll(h.store, 'busy');
    await h.store.queuePause({ queue: 'b' });
    const runAt = async (id: string) => (await mustGet(h.store, id)).runAt;

    const all = await h.store.queueOldestDue();
    expect(all.queues).toEqual([
      { queue: 'a', oldestDueAt: await runAt(a1), dueCount: 2 },
      { queue: 'b', oldestDueAt: await runAt(b1), dueCount: 1 },
    ]);
    expect(all.examinedUntil).toBeNull();
    expect(all.dueExamined).toBe(3);
    expect(all.now.getTime()).toBeGreaterThanOrEqual((await runAt(a2)).getTime());

    const asked = await h.store.queueOldestDue({ queues: ['later', 'b', 'nowhere', 'b'] });
    expect(asked.queues).toEqual([
      { queue: 'later', oldestDueAt: null, dueCount: 0 },
      { queue: 'b', oldestDueAt: await runAt(b1), dueCount: 1 },
      { queue: 'nowhere', oldestDueAt: null, dueCount: 0 },
    ]);
    expect(asked.examinedUntil).toBeNull();
    // The total counts every queue's due jobs, asked or not.
    expect(asked.dueExamined).toBe(3);
    expect((await h.store.queueOldestDue({ queues: [] })).queues).toEqual([]);
  });

  it(`queueOldestDue examines at most ${DUE_SCAN_LIMIT} due jobs and says where it stopped`, async () => {
    const h = await ctx.open();
    for (let start = 0; start < DUE_SCAN_LIMIT; start += 1_000) {
      await h.store.jobEnqueueMany({ jobs: Array.from({ length: 1_000 }, (_, i) => ({ name: 'bulk', payload: start + i, queue: 'bulk' })) });
    }
    await h.advance(1_000);
    const rare = await enqueue(h.store, { queue: 'rare' });
    const [first] = (await h.store.jobListPage({ order: 'oldest', limit: 1 })).jobs;
    const [last] = (await h.store.jobListPage({ queue: 'bulk', limit: 1 })).jobs;

    const read = await h.store.queueOldestDue({ queues: ['rare', 'bulk'] });
    expect(read.queues).toEqual([
      { queue: 'rare', oldestDueAt: null, dueCount: 0 },
      { queue: 'bulk', oldestDueAt: first!.runAt, dueCount: DUE_SCAN_LIMIT },
    ]);
    expect(read.examinedUntil).toEqual(last!.runAt);
    expect(read.dueExamined).toBe(DUE_SCAN_LIMIT);
    expect(read.examinedUntil!.getTime()).toBeLessThan((await mustGet(h.store, rare)).runAt.getTime());

    // Once two bulk jobs run, fewer than the bound are due, and the answer is exact again.
    await claimAll(h.store, 'bulk', 2);
    const exact = await h.store.queueOldestDue({ queues: ['rare'] });
    expect(exact).toEqual({ queues: [{ queue: 'rare', oldestDueAt: (await mustGet(h.store, rare)).runAt, dueCount: 1 }], examinedUntil: null, dueExamined: DUE_SCAN_LIMIT - 1, now: exact.now });
  });

  it('jobThroughput counts finished jobs per bucket by how they ended, for one queue or all', async () => {
    const h = await ctx.open();
    // An old success, outside the window.
    const old = await enqueue(h.store, { queue: 'a' });
    await claimAll(h.store, 'a');
    await h.store.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId: old, attempt: 1, kind: 'succeeded' }] });
    await h.advance(10 * MINUTE);
    // Two successes and a dead letter in queue a, a cancel in queue b.
    const first = [await enqueue(h.store, { queue: 'a' }), await enqueue(h.store, { queue: 'a' }), await enqueue(h.store, { queue: 'a', maxAttempts: 1 })];
    await claimAll(h.store, 'a');
    await h.store.jobCompleteMany({
      workerId: 'w',
      outcomes: [
        { jobId: first[0]!, attempt: 1, kind: 'succeeded' },
        { jobId: first[1]!, attempt: 1, kind: 'succeeded' },
        { jobId: first[2]!, attempt: 1, kind: 'failed', error: 'x', retryDelayMs: 0 },
      ],
    });
    const cancelled = await enqueue(h.store, { queue: 'b' });
    await h.store.jobCancel({ jobId: cancelled });
    await h.advance(2 * MINUTE);
    // One more success in queue b, two minutes later.
    const late = await enqueue(h.store, { queue: 'b' });
    await claimAll(h.store, 'b');
    await h.store.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId: late, attempt: 1, kind: 'succeeded' }] });

    const finishedAt = async (id: string) => (await mustGet(h.store, id)).finishedAt!.getTime();
    const windowStart = (await finishedAt(first[0]!)) - 30_000;
    expect(await finishedAt(old)).toBeLessThan(windowStart);
    const since = new Date(windowStart);

    const all = await h.store.jobThroughput({ since, bucketMs: MINUTE });
    expect(all.partialUntil).toBeNull();
    const now = all.now.getTime();
    expect(all.buckets).toHaveLength(Math.floor((now - windowStart) / MINUTE) + 1);
    all.buckets.forEach((bucket, i) => expect(bucket.start.getTime()).toBe(windowStart + i * MINUTE));

    // Expected counts, from the finishedAt each job reads back with.
    const expected = (rows: Array<[string, 'succeeded' | 'deadLettered' | 'cancelled']>) => {
      const buckets = all.buckets.map((bucket) => ({ start: bucket.start, succeeded: 0, deadLettered: 0, cancelled: 0 }));
      return Promise.all(rows.map(async ([id, kind]) => [Math.floor(((await finishedAt(id)) - windowStart) / MINUTE), kind] as const)).then((placed) => {
        for (const [i, kind] of placed) buckets[i]![kind] += 1;
        return buckets;
      });
    };
    expect(all.buckets).toEqual(
      await expected([
        [first[0]!, 'succeeded'],
        [first[1]!, 'succeeded'],
        [first[2]!, 'deadLettered'],
        [cancelled, 'cancelled'],
        [late, 'succeeded'],
      ]),
    );
    const b = await h.store.jobThroughput({ since, bucketMs: MINUTE, queue: 'b' });
    expect(b.buckets).toEqual(await expected([[cancelled, 'cancelled'], [late, 'succeeded']]));
    expect((await h.store.jobThroughput({ since, bucketMs: MINUTE, queue: 'none' })).buckets.every((x) => x.succeeded + x.deadLettered + x.cancelled === 0)).toBe(true);

    // A window that starts after now has no buckets; one longer than 1,440 buckets keeps the newest.
    expect((await h.store.jobThroughput({ since: new Date(now + 3_600_000), bucketMs: MINUTE })).buckets).toEqual([]);
    const long = await h.store.jobThroughput({ since: new Date(windowStart - 2_000 * MINUTE), bucketMs: MINUTE });
    expect(long.buckets).toHaveLength(1_440);
    expect(long.buckets.at(-1)!.start.getTime()).toBeLessThanOrEqual(long.now.getTime());
    expect(long.buckets.at(-1)!.start.getTime()).toBeGreaterThan(long.now.getTime() - MINUTE);
    const total = (buckets: typeof all.buckets) => buckets.reduce((sum, x) => sum + x.succeeded + x.deadLettered + x.cancelled, 0);
    // The newest 1,440 minutes reach back past the old success too.
    expect(total(long.buckets)).toBe(6);
  });
}
