import { expect, it } from '@jest/globals';
import { InvalidArgumentError } from '../../../core/index.js';
import type { SuiteContext } from '../harness.js';
import { enqueueRun, LEASE_MS, succeed as finish, takeJobs as take } from './helpers.js';

/**
 * Fair groups (docs/groups.md): claims take turns across the groups that have due work, so a group
 * with a large backlog cannot starve a group with one job; priorities still come first; a group's
 * limits are its concurrency key's.
 */
export function groupCases(ctx: SuiteContext): void {
  it('issue 39 item 1: a claim beside 300 due jobs of one group takes the one job of another group, and the big group keeps its order', async () => {
    const h = await ctx.open();
    const a = await enqueueRun(h.store, 300, { group: 'tenant-a' });
    const [b] = await enqueueRun(h.store, 1, { group: 'tenant-b' });

    const claimed = await take(h.store, 4);
    expect(claimed.map((j) => j.id).sort()).toEqual([...a.slice(0, 3), b!].sort());
    const bJob = claimed.find((j) => j.id === b)!;
    // The job carries its group, and its concurrency key defaults to it.
    expect(bJob.group).toBe('tenant-b');
    expect(bJob.concurrencyKey).toBe('tenant-b');
    expect((await h.store.jobGet({ jobId: a[0]! }))!.group).toBe('tenant-a');
    // The rest of the big group comes in its order.
    expect((await take(h.store, 5)).map((j) => j.id)).toEqual(a.slice(3, 8));
  });

  it('issue 39 item 1: claims of one job take turns across three groups, however long each backlog', async () => {
    const h = await ctx.open();
    await enqueueRun(h.store, 120, { group: 'a' });
    await enqueueRun(h.store, 5, { group: 'b' });
    await enqueueRun(h.store, 40, { group: 'c' });

    const groups: (string | null)[] = [];
    for (let i = 0; i < 9; i++) groups.push(...(await take(h.store, 1)).map((j) => j.group));
    // Each group once per three claims, in turn.
    for (let i = 0; i < 9; i += 3) expect(new Set(groups.slice(i, i + 3))).toEqual(new Set(['a', 'b', 'c']));
    expect(groups.slice(3)).toEqual([...groups.slice(0, 3), ...groups.slice(0, 3)]);
  });

  it('issue 39 item 1: ungrouped jobs take their turns together, as one group', async () => {
    const h = await ctx.open();
    const plain = await enqueueRun(h.store, 200);
    const [grouped] = await enqueueRun(h.store, 1, { group: 'late' });

    const claimed = (await take(h.store, 2)).map((j) => j.id);
    expect(claimed.sort()).toEqual([plain[0]!, grouped!].sort());
  });

  it('issue 39 item 1: a more urgent priority comes before any turn; within a priority the groups take turns', async () => {
    const h = await ctx.open();
    const urgent = await enqueueRun(h.store, 6, { group: 'a', priority: -5 });
    const aLater = await enqueueRun(h.store, 50, { group: 'a' });
    const [b] = await enqueueRun(h.store, 1, { group: 'b' });

    expect((await take(h.store, 4)).map((j) => j.id)).toEqual(urgent.slice(0, 4));
    const next = (await take(h.store, 4)).map((j) => j.id);
    expect(next.slice(0, 2)).toEqual(urgent.slice(4, 6));
    expect(next.slice(2).sort()).toEqual([aLater[0]!, b!].sort());
  });

  it("issue 39 item 1: a group's cap is its key's: its held-back jobs wait while the other groups fill the batch", async () => {
    const h = await ctx.open();
    await h.store.concurrencyLimitSet({ target: { key: 'a' }, max: 1 });
    const a = await enqueueRun(h.store, 30, { group: 'a' });
    const b = await enqueueRun(h.store, 5, { group: 'b' });

    const first = await take(h.store, 10);
    expect(first.filter((j) => j.group === 'a').map((j) => j.id)).toEqual([a[0]]);
    expect(first.filter((j) => j.group === 'b').map((j) => j.id)).toEqual(b);
    // Nothing more of a while its one slot is taken; once it frees, a's next job.
    expect(await take(h.store, 10)).toEqual([]);
    await finish(h.store, first.find((j) => j.group === 'a')!);
    expect((await take(h.store, 10)).map((j) => j.id)).toEqual([a[1]]);
  });

  it('issue 39 item 1: a limit declared at enqueue under a group caps the group', async () => {
    const h = await ctx.open();
    const a = await enqueueRun(h.store, 10, { group: 'a', concurrencyLimit: 2 });
    const claimed = await take(h.store, 10);
    expect(claimed.map((j) => j.id)).toEqual(a.slice(0, 2));
  });

  it('issue 39 item 1: with more groups than a claim reads lanes, every group still gets its first turn before any its second', async () => {
    const h = await ctx.open();
    const groups = Array.from({ length: 90 }, (_, i) => `g${String(i).padStart(2, '0')}`);
    for (const group of groups) await enqueueRun(h.store, 2, { group });

    const seen: string[] = [];
    for (let i = 0; i < 9; i++) seen.push(...(await take(h.store, 10)).map((j) => j.group!));
    expect(seen).toHaveLength(90);
    expect(new Set(seen).size).toBe(90);
    const rest: string[] = [];
    for (let i = 0; i < 10; i++) rest.push(...(await take(h.store, 10)).map((j) => j.group!));
    expect(rest.sort()).toEqual([...groups].sort());
  });

  it("issue 39 item 1: the lanes of queues a worker does not serve never use up its claim's lanes", async () => {
    const h = await ctx.open();
    // 70 groups wait in a queue sorted before the worker's own: more lanes than a claim reads.
    for (let i = 0; i < 70; i++) await enqueueRun(h.store, 1, { group: `g${String(i).padStart(2, '0')}`, queue: 'aa-other' });
    const [mine] = await enqueueRun(h.store, 1, { group: 'mine', queue: 'zz-mine' });
    const claimed = await h.store.jobClaim({ workerId: 'w', limit: 1, queues: ['zz-mine'], leaseMs: LEASE_MS });
    expect(claimed.map((j) => j.id)).toEqual([mine]);
  });

  it('issue 39 item 1: candidates a lane held back for priority are still taken before less urgent ones of the claim index', async () => {
    const h = await ctx.open();
    const a = await enqueueRun(h.store, 2, { group: 'a', priority: -1 });
    const [b] = await enqueueRun(h.store, 1, { group: 'b', priority: -1 });
    const [x] = await enqueueRun(h.store, 1, { priority: 0 });
    await enqueueRun(h.store, 20, { priority: 5 });

    const claimed = (await take(h.store, 4)).map((j) => j.id);
    expect(claimed.sort()).toEqual([...a, b!, x!].sort());
  });

  it('issue 39 item 1: groups whose names sort differently in the database and in JavaScript are each read once, however the turns wrap', async () => {
    const h = await ctx.open();
    // 63 groups of one job, then U+FF01 and an astral character, two jobs each: UTF-8 puts the
    // astral one last, UTF-16 between the others. A first claim reads 64 lanes and ends on U+FF01.
    for (let i = 0; i < 63; i++) await enqueueRun(h.store, 1, { group: `g${String(i).padStart(2, '0')}` });
    await enqueueRun(h.store, 2, { group: '\uff01' });
    await enqueueRun(h.store, 2, { group: '\u{1f600}' });
    const first = await take(h.store, 64);
    expect(new Set(first.map((j) => j.id)).size).toBe(64);
    const second = await take(h.store, 10);
    expect(new Set(second.map((j) => j.id)).size).toBe(second.length);
    expect(second.every((j) => j.attempt === 1)).toBe(true);
    expect([...first, ...second]).toHaveLength(67);
  });

  it('issue 39 item 1: a grouped job that comes due later, as a retry, takes its turn beside a backlog', async () => {
    const h = await ctx.open();
    const [b] = await enqueueRun(h.store, 1, { group: 'b', maxAttempts: 3 });
    const first = await take(h.store, 1);
    expect(first.map((j) => j.id)).toEqual([b]);
    await h.store.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId: b!, attempt: 1, kind: 'failed', error: 'boom', retryDelayMs: 1_000 }] });
    const a = await enqueueRun(h.store, 300, { group: 'a' });
    await h.advance(2_000);

    const claimed = (await take(h.store, 3)).map((j) => j.id);
    expect(claimed.sort()).toEqual([...a.slice(0, 2), b!].sort());
  });

  it('issue 39 item 1: a bad group is refused in one sentence, and nothing is written', async () => {
    const h = await ctx.open();
    for (const group of ['', 'a\u0007b', 'x'.repeat(201), 7]) {
      const refused = await h.store.jobEnqueue({ job: { name: 'test.job', payload: 1, group: group as string } }).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(InvalidArgumentError);
      expect((refused as Error).message).toMatch(/^group must be 1 to 200 characters without control characters, got .+\.$/);
    }
    expect(await take(h.store, 10)).toEqual([]);
  });
}
