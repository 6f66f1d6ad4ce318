import { afterEach, describe, expect, it } from '@jest/globals';
import { OccurrenceId, SeededRandom } from '../../lib/core/index.js';
import { MemoryJobStore } from '../../lib/store/index.js';
import { FunctionInvoker, WorkerNode, type JobContext } from '../../lib/worker/index.js';
import { ManualTimers } from '../support/manual-timers.js';

const nodes: WorkerNode[] = [];
afterEach(async () => {
  for (const node of nodes.splice(0)) void node.stop();
});

function setup(handle: (payload: unknown, ctx: JobContext) => void | Promise<void>) {
  const timers = new ManualTimers();
  const store = new MemoryJobStore({ clock: timers.clock });
  const node = new WorkerNode({
    store,
    invoker: new FunctionInvoker({ tick: { handle } }),
    options: { pollIntervalMs: 1_000, heartbeatIntervalMs: 10_000, leaseMs: 30_000, scheduleCheckIntervalMs: 15_000, workerId: 'n1' },
    clock: timers.clock,
    timers,
    random: new SeededRandom(3n),
  });
  nodes.push(node);
  return { timers, store, node };
}

describe('the schedule minter, on virtual time', () => {
  it('runs each tick of a recurring schedule once, at its time, with the occurrence id', async () => {
    const runs: Array<{ scheduledFor: number; occurrenceId: string; at: number }> = [];
    const { timers, store, node } = setup((_payload, ctx) => void runs.push({ scheduledFor: ctx.scheduledFor.getTime(), occurrenceId: ctx.occurrenceId, at: timers.clock.now() }));
    const { schedule } = await store.scheduleUpsert({ name: 'tick', everyMs: 60_000 });
    await node.start();
    await timers.advance(59_999);
    expect(runs).toEqual([]);
    await timers.advance(1);
    expect(runs).toHaveLength(1);
    await timers.advance(3 * 60_000);
    expect(runs).toHaveLength(4);
    const start = schedule.nextFireAt!.getTime();
    expect(runs.map((r) => r.scheduledFor)).toEqual([start, start + 60_000, start + 120_000, start + 180_000]);
    // Each ran at its tick, not a poll later: the minter sleeps exactly until the next tick.
    expect(runs.map((r) => r.at)).toEqual(runs.map((r) => r.scheduledFor));
    expect(runs.map((r) => r.occurrenceId)).toEqual(runs.map((r) => OccurrenceId.derive(schedule.id, new Date(r.scheduledFor))));
  });

  it('after downtime, skips the missed ticks and records them, then carries on', async () => {
    const runs: number[] = [];
    const { timers, store, node } = setup((_p, ctx) => void runs.push(ctx.scheduledFor.getTime()));
    const { schedule } = await store.scheduleUpsert({ name: 'tick', everyMs: 60_000, misfireGraceMs: 10_000 });
    timers.clock.advance(10 * 60_000 + 30_000); // the node was down for ten ticks
    await node.start();
    await timers.advance(0);
    expect(runs).toEqual([]);
    expect(await store.scheduleGet(schedule.id)).toMatchObject({ skippedTicks: 10, lastSkipReason: 'missed' });
    await timers.advance(30_000);
    expect(runs).toEqual([schedule.nextFireAt!.getTime() + 10 * 60_000]);
  });

  it('with noOverlap, skips ticks while an occurrence is still running', async () => {
    let release!: () => void;
    const blocked = new Promise<void>((resolve) => (release = resolve));
    const runs: number[] = [];
    const { timers, store, node } = setup(async (_p, ctx) => {
      runs.push(ctx.scheduledFor.getTime());
      if (runs.length === 1) await blocked;
    });
    const { schedule } = await store.scheduleUpsert({ name: 'tick', everyMs: 60_000, noOverlap: true });
    await node.start();
    await timers.advance(3 * 60_000);
    expect(runs).toHaveLength(1);
    expect(await store.scheduleGet(schedule.id)).toMatchObject({ skippedTicks: 2, lastSkipReason: 'overlap' });
    release();
    await timers.advance(60_000);
    expect(runs).toHaveLength(2);
  });
});
