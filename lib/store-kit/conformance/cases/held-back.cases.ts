import { expect, it } from '@jest/globals';
import type { SuiteContext } from '../harness.js';
import { enqueueRun, succeed as finish, takeJobs as take } from './helpers.js';

/**
 * A claim fills its free slots from the due jobs that no limit holds back, whatever the mix: jobs
 * whose cap is reached or whose rate is spent are passed over however many of them come first in
 * claim order, and they keep their place for when their limit has room again.
 */
export function heldBackCases(ctx: SuiteContext): void {
  it('issue 35 item 1: a claim of 8 beside 200 urgent jobs of a key capped at 1 takes 1 of them and 7 others', async () => {
    const h = await ctx.open();
    await h.store.concurrencyLimitSet({ target: { key: 'hot' }, max: 1 });
    const hot = await enqueueRun(h.store, 200, { concurrencyKey: 'hot', priority: -10 });
    const normal = await enqueueRun(h.store, 200);

    expect((await take(h.store, 8)).map((j) => j.id)).toEqual([hot[0], ...normal.slice(0, 7)]);
    // The key is at its cap: a second claimer gets none of its jobs, and a full batch of the rest.
    expect((await take(h.store, 8, ['default'], 'w2')).map((j) => j.id)).toEqual(normal.slice(7, 15));
  });

  it('issue 35 item 1: a held-back run keeps its order, and its next job goes first once its cap has room', async () => {
    const h = await ctx.open();
    await h.store.concurrencyLimitSet({ target: { key: 'hot' }, max: 1 });
    const hot = await enqueueRun(h.store, 200, { concurrencyKey: 'hot' });
    const normal = await enqueueRun(h.store, 200);

    let running = await take(h.store, 8);
    expect(running.map((j) => j.id)).toEqual([hot[0], ...normal.slice(0, 7)]);
    for (let round = 1; round <= 5; round++) {
      const hotJob = running.find((j) => j.concurrencyKey === 'hot')!;
      await finish(h.store, hotJob);
      running = await take(h.store, 2);
      // Equal priorities: the key's next job was enqueued before every normal job left.
      expect(running.map((j) => j.id)).toEqual([hot[round], normal[6 + round]]);
    }
  });

  it('issue 35 item 1: passes over a spent rate limit however many of its jobs come first', async () => {
    const h = await ctx.open();
    await h.store.rateLimitSet({ target: { key: 'api' }, rate: { max: 1, perMs: 3_600_000 } });
    const limited = await enqueueRun(h.store, 200, { concurrencyKey: 'api', priority: -10 });
    const normal = await enqueueRun(h.store, 50);

    expect((await take(h.store, 8)).map((j) => j.id)).toEqual([limited[0], ...normal.slice(0, 7)]);
    expect((await take(h.store, 8)).map((j) => j.id)).toEqual(normal.slice(7, 15));
  });

  it('issue 35 item 1: passes over a capped queue for the other queues a worker serves', async () => {
    const h = await ctx.open();
    await h.store.concurrencyLimitSet({ target: { queue: 'mail' }, max: 1 });
    const mail = await enqueueRun(h.store, 100, { queue: 'mail' });
    const other = await enqueueRun(h.store, 20);

    expect((await take(h.store, 8, ['default', 'mail'])).map((j) => j.id)).toEqual([mail[0], ...other.slice(0, 7)]);
    expect((await take(h.store, 8, ['default', 'mail'])).map((j) => j.id)).toEqual(other.slice(7, 15));
  });

  it('issue 35 item 1: fills the batch past a held-back run thousands of jobs long', async () => {
    const h = await ctx.open();
    await h.store.concurrencyLimitSet({ target: { key: 'hot' }, max: 1 });
    const hot = await enqueueRun(h.store, 3_000, { concurrencyKey: 'hot', priority: -5 });
    const normal = await enqueueRun(h.store, 10);

    expect((await take(h.store, 8)).map((j) => j.id)).toEqual([hot[0], ...normal.slice(0, 7)]);
    expect((await take(h.store, 8)).map((j) => j.id)).toEqual(normal.slice(7));
  });

  it('issue 35 item 1: held-back jobs are claimed once their limit is removed, and in claim order', async () => {
    const h = await ctx.open();
    await h.store.concurrencyLimitSet({ target: { key: 'hot' }, max: 1 });
    const hot = await enqueueRun(h.store, 30, { concurrencyKey: 'hot' });
    const normal = await enqueueRun(h.store, 10);
    expect((await take(h.store, 8)).map((j) => j.id)).toEqual([hot[0], ...normal.slice(0, 7)]);

    await h.store.concurrencyLimitSet({ target: { key: 'hot' }, max: null });
    expect((await take(h.store, 100)).map((j) => j.id)).toEqual([...hot.slice(1), ...normal.slice(7)]);
  });

  it('issue 35 item 1: held-back jobs of a paused or unlisted queue stay put, and run once resumed', async () => {
    const h = await ctx.open();
    await h.store.concurrencyLimitSet({ target: { key: 'hot' }, max: 1 });
    const hot = await enqueueRun(h.store, 20, { queue: 'mail', concurrencyKey: 'hot' });
    const other = await enqueueRun(h.store, 10, { queue: 'mail' });
    const first = await take(h.store, 4, ['mail']);
    expect(first.map((j) => j.id)).toEqual([hot[0], ...other.slice(0, 3)]);
    await finish(h.store, first[0]!);

    await h.store.queuePause({ queue: 'mail' });
    expect(await take(h.store, 8, ['mail'])).toEqual([]);
    expect(await take(h.store, 8, ['default'])).toEqual([]);
    await h.store.queueResume({ queue: 'mail' });
    expect((await take(h.store, 4, ['mail'])).map((j) => j.id)).toEqual([hot[1], ...other.slice(3, 6)]);
  });

  it('issue 35 item 1: a held-back job that a unique enqueue pushes into the future waits for its new run time', async () => {
    const h = await ctx.open();
    await h.store.concurrencyLimitSet({ target: { key: 'hot' }, max: 1 });
    const first = await h.store.jobEnqueue({ job: { name: 'test.job', payload: 0, concurrencyKey: 'hot' } });
    const digest = await h.store.jobEnqueue({ job: { name: 'test.job', payload: 1, concurrencyKey: 'hot', uniqueKey: 'digest' } });
    const running = await take(h.store, 4);
    expect(running.map((j) => j.id)).toEqual([first.id]);
    const replaced = await h.store.jobEnqueue({ job: { name: 'test.job', payload: 2, concurrencyKey: 'hot', uniqueKey: 'digest', uniqueKeyMode: 'replace', delayMs: 60_000 } });
    expect(replaced).toMatchObject({ id: digest.id, deduplicated: 'replaced' });
    await finish(h.store, running[0]!);
    expect(await take(h.store, 4)).toEqual([]);
    await h.advance(60_000);
    expect((await take(h.store, 4)).map((j) => [j.id, j.payload])).toEqual([[digest.id, 2]]);
  });

  it('issue 35 item 1: an outcome while a limit holds jobs back wakes this process\'s workers, so a capped key does not wait a poll per job', async () => {
    const h = await ctx.open();
    if (h.store.capabilities.wakeHints === 'none') return expect(h.store.capabilities.wakeHints).toBe('none');
    await h.store.concurrencyLimitSet({ target: { key: 'hot' }, max: 1 });
    await enqueueRun(h.store, 3, { concurrencyKey: 'hot' });
    const woken: string[] = [];
    const subscription = await h.store.subscribeWakeHints({ listener: (queue) => void (queue === '*' && woken.push(queue)) });
    try {
      const [first] = await take(h.store, 4);
      expect(woken).toEqual([]);
      await finish(h.store, first!);
      expect(woken).toEqual(['*']);
      // With nothing held back any more, an outcome wakes nobody.
      await h.store.concurrencyLimitSet({ target: { key: 'hot' }, max: null });
      const rest = await take(h.store, 4);
      expect(rest).toHaveLength(2);
      woken.length = 0;
      await finish(h.store, rest[0]!);
      expect(woken).toEqual([]);
    } finally {
      await subscription.close();
    }
  });

  it('issue 35 item 1: a held-back job can still be cancelled, and a cancelled one is never claimed', async () => {
    const h = await ctx.open();
    await h.store.concurrencyLimitSet({ target: { key: 'hot' }, max: 1 });
    const hot = await enqueueRun(h.store, 10, { concurrencyKey: 'hot' });
    const first = await take(h.store, 4);
    expect(first.map((j) => j.id)).toEqual([hot[0]]);
    await h.store.jobCancel({ jobId: hot[1]! });
    await finish(h.store, first[0]!);
    expect((await take(h.store, 4)).map((j) => j.id)).toEqual([hot[2]]);
  });
}
