import { expect, it } from '@jest/globals';
import { InvalidArgumentError, type JobRecord } from '../../../core/index.js';
import { LIST_SCAN_LIMIT, type JobStore, type ListJobsParams } from '../../../store/index.js';
import type { SuiteContext } from '../harness.js';
import { claimOne, enqueue, LEASE_MS } from './helpers.js';

const DAY = 86_400_000;

/** Every page of a listing, followed from `next` to `next` (as `before`, or `after` oldest first) until it is null. */
async function pages(store: JobStore, params: ListJobsParams): Promise<string[][]> {
  const seen: string[][] = [];
  const cursorName = params.order === 'oldest' ? 'after' : 'before';
  let cursor = params[cursorName];
  for (;;) {
    const page = await store.jobListPage({ ...params, [cursorName]: cursor });
    expect(page.jobs.length).toBeLessThanOrEqual(params.limit ?? 50);
    seen.push(page.jobs.map((job) => job.id));
    if (page.next === null) return seen;
    cursor = page.next;
  }
}

/** A listing's expected ids: the stored jobs that pass the filters, newest (last enqueued) first. */
function expected(jobs: readonly JobRecord[], { state, queue, name }: ListJobsParams): string[] {
  return jobs
    .filter((job) => (state === undefined || job.state === state) && (queue === undefined || job.queue === queue) && (name === undefined || job.name === name))
    .map((job) => job.id)
    .reverse();
}

/** Enqueues `count` jobs of `queue` in batches, oldest first, and returns their ids in that order. */
async function enqueueMany(store: JobStore, count: number, queue: string): Promise<string[]> {
  const ids: string[] = [];
  for (let start = 0; start < count; start += 1_000) {
    const batch = Array.from({ length: Math.min(1_000, count - start) }, (_, i) => ({ name: `${queue}.job`, payload: start + i, queue }));
    ids.push(...(await store.jobEnqueueMany({ jobs: batch })).map((result) => result.id));
  }
  return ids;
}

export function listingCases(ctx: SuiteContext): void {
  it('pages oldest first with after, and filters by id prefix and enqueue time, newest or oldest first', async () => {
    const h = await ctx.open();
    const id = (prefix: string, n: number) => `${prefix}-0000-7000-8000-${String(n).padStart(12, '0')}`;
    const ids: string[] = [];
    for (let group = 0; group < 3; group++) {
      if (group > 0) await h.advance(10_000);
      for (let i = 0; i < 4; i++) ids.push(await enqueue(h.store, { id: id(i % 2 === 0 ? 'aaaaaaaa' : 'abbbbbbb', group * 4 + i), queue: 'q' }));
    }
    const stored: JobRecord[] = [];
    for (const jobId of ids) stored.push((await h.store.jobGet({ jobId }))!);
    const oldestFirst = (want: (job: JobRecord) => boolean) => stored.filter(want).map((job) => job.id);
    const newestFirst = (want: (job: JobRecord) => boolean) => oldestFirst(want).reverse();

    for (const limit of [1, 5, 50]) {
      expect((await pages(h.store, { order: 'oldest', limit })).flat()).toEqual(ids);
      expect((await pages(h.store, { order: 'oldest', limit, state: 'scheduled' })).flat()).toEqual(ids);
    }
    const secondGroup = stored[4]!.createdAt;
    const thirdGroup = stored[8]!.createdAt;
    const cases: Array<[ListJobsParams, (job: JobRecord) => boolean]> = [
      [{ idPrefix: 'aaaa' }, (job) => job.id.startsWith('aaaa')],
      [{ idPrefix: 'AAAAAAAA-0000-7000-8000-00000000000' }, (job) => job.id.startsWith('aaaaaaaa-0000-7000-8000-00000000000')],
      [{ idPrefix: 'abbbbbbb00007' }, (job) => job.id.startsWith('abbbbbbb-0000-7')],
      [{ idPrefix: 'a' }, () => true],
      [{ idPrefix: 'b' }, () => false],
      [{ enqueuedAfter: secondGroup }, (job) => job.createdAt >= secondGroup],
      [{ enqueuedBefore: secondGroup }, (job) => job.createdAt < secondGroup],
      [{ enqueuedAfter: secondGroup, enqueuedBefore: thirdGroup, idPrefix: 'aaaaaaaa-' }, (job) => job.createdAt >= secondGroup && job.createdAt < thirdGroup && job.id.startsWith('aaaaaaaa')],
    ];
    for (const [filter, want] of cases) {
      for (const limit of [1, 3, 50]) {
        expect((await pages(h.store, { ...filter, limit })).flat()).toEqual(newestFirst(want));
        expect((await pages(h.store, { ...filter, limit, order: 'oldest' })).flat()).toEqual(oldestFirst(want));
      }
    }
    expect(newestFirst((job) => job.createdAt >= secondGroup)).toHaveLength(8);

    // The oldest order's cursor is after; one that names no job is refused by that name.
    const page1 = await h.store.jobListPage({ order: 'oldest', limit: 2 });
    expect(page1).toEqual({ jobs: [expect.objectContaining({ id: ids[0] }), expect.objectContaining({ id: ids[1] })], next: ids[1] });
    expect((await h.store.jobListPage({ order: 'oldest', limit: 2, after: page1.next! })).jobs.map((job) => job.id)).toEqual(ids.slice(2, 4));
    const missing = '0190a5a0-0000-7000-8000-00000000beef';
    await expect(h.store.jobListPage({ order: 'oldest', after: missing })).rejects.toThrow(
      `after names job ${missing}, which is not stored (retention may have deleted it since the page that named it); start again from the first page.`,
    );
  });


  it('pages through every job exactly once, newest first, with and without filters', async () => {
    const h = await ctx.open();
    const ids: string[] = [];
    for (let i = 0; i < 30; i++) ids.push(await enqueue(h.store, { name: i % 3 === 0 ? 'alpha' : 'beta', queue: i % 2 === 0 ? 'a' : 'b', maxAttempts: 1 }));
    // Some run, some succeed, some are dead-lettered, so the states interleave in enqueue order.
    const running = await h.store.jobClaim({ workerId: 'w', limit: 9, queues: ['a'], leaseMs: LEASE_MS });
    await h.store.jobCompleteMany({
      workerId: 'w',
      outcomes: running.slice(0, 6).map((job, i) =>
        i % 2 === 0 ? { jobId: job.id, attempt: 1, kind: 'succeeded' as const } : { jobId: job.id, attempt: 1, kind: 'dead_lettered' as const, error: 'x' },
      ),
    });
    const stored: JobRecord[] = [];
    for (const id of ids) stored.push((await h.store.jobGet({ jobId: id }))!);

    const filters: ListJobsParams[] = [
      {},
      { state: 'scheduled' },
      { state: 'running' },
      { state: 'succeeded' },
      { queue: 'a' },
      { name: 'alpha' },
      { queue: 'b', name: 'beta', state: 'scheduled' },
      { state: 'cancelled' },
    ];
    for (const filter of filters) {
      const want = expected(stored, filter);
      for (const limit of [1, 3, 7, 50]) {
        const seen = await pages(h.store, { ...filter, limit });
        expect(seen.flat()).toEqual(want);
        // Every page is full but the last, and the page that holds the oldest match says so.
        expect(seen.slice(0, -1).every((page) => page.length === limit)).toBe(true);
        expect(seen.at(-1)!.length).toBe(want.length === 0 ? 0 : ((want.length - 1) % limit) + 1);
      }
    }
    expect((await h.store.jobList({ queue: 'a', limit: 4 })).map((job) => job.id)).toEqual(expected(stored, { queue: 'a' }).slice(0, 4));
  });

  it('keeps its place while jobs arrive and change between pages', async () => {
    const h = await ctx.open();
    const first: string[] = [];
    for (let i = 0; i < 10; i++) first.push(await enqueue(h.store, { queue: 'q' }));
    const page1 = await h.store.jobListPage({ queue: 'q', limit: 4 });
    expect(page1.jobs.map((job) => job.id)).toEqual(first.slice(6).reverse());
    const later = [await enqueue(h.store, { queue: 'q' }), await enqueue(h.store, { queue: 'q' })];
    await claimOne(h.store, 'w', ['q']); // the oldest job changes state; it stays in the unfiltered listing
    const rest = await pages(h.store, { queue: 'q', limit: 4, before: page1.next! });
    expect(rest.flat()).toEqual(first.slice(0, 6).reverse());
    expect((await h.store.jobList({ queue: 'q', limit: 3 })).map((job) => job.id)).toEqual([...later].reverse().concat(first[9]!));
  });

  it(`examines at most ${LIST_SCAN_LIMIT} jobs per page: a rare filter gets a short page whose next leads on`, async () => {
    const h = await ctx.open();
    const [oldRare] = await enqueueMany(h.store, 1, 'rare');
    const bulk = await enqueueMany(h.store, LIST_SCAN_LIMIT, 'bulk');
    const newRare = await enqueue(h.store, { name: 'rare.job', queue: 'rare' });

    // The newest job and 9,999 bulk jobs fill the scan: one match, and next is the last job examined.
    const short = await h.store.jobListPage({ queue: 'rare', limit: 10 });
    expect(short).toEqual({ jobs: [expect.objectContaining({ id: newRare })], next: bulk[1] });
    const on = await h.store.jobListPage({ queue: 'rare', limit: 10, before: short.next! });
    expect(on).toEqual({ jobs: [expect.objectContaining({ id: oldRare })], next: null });
    // The same with a state filter and a name filter, and jobList shares the cut.
    expect((await h.store.jobListPage({ state: 'scheduled', name: 'rare.job', limit: 10 })).next).toBe(bulk[1]);
    expect((await h.store.jobList({ queue: 'rare', limit: 10 })).map((job) => job.id)).toEqual([newRare]);
    // A filter that matches nothing in the scan still leads on, to the end.
    expect(await pages(h.store, { queue: 'nowhere', limit: 10 })).toEqual([[], []]);

    // Unfiltered, pages of 1,000 cover all 10,002 jobs exactly once.
    const all = (await pages(h.store, { limit: 1_000 })).flat();
    expect(all).toEqual([newRare, ...[...bulk].reverse(), oldRare]);
  });

  it('refuses a before that names no stored job, or one retention deleted, with one sentence', async () => {
    const h = await ctx.open();
    const gone = await enqueue(h.store);
    const kept = await enqueue(h.store);
    const missing = '0190a5a0-0000-7000-8000-00000000beef';
    const refusal = (id: string) => `before names job ${id}, which is not stored (retention may have deleted it since the page that named it); start again from the first page.`;
    await expect(h.store.jobListPage({ before: missing })).rejects.toThrow(refusal(missing));
    await expect(h.store.jobList({ before: missing })).rejects.toBeInstanceOf(InvalidArgumentError);
    expect((await h.store.jobListPage({ limit: 1 })).next).toBe(kept);
    await h.store.jobCancel({ jobId: gone });
    await h.advance(DAY + 1);
    expect(await h.store.jobPurge({ olderThanMs: DAY, limit: 10 })).toBe(1);
    await expect(h.store.jobListPage({ before: gone })).rejects.toThrow(refusal(gone));
    expect(await h.store.jobListPage({ before: kept })).toEqual({ jobs: [], next: null });
    // An id in another spelling (upper case) names the same job.
    expect(await h.store.jobListPage({ before: kept.toUpperCase() })).toEqual({ jobs: [], next: null });
  });
}
