import { afterEach, describe, expect, it } from '@jest/globals';
import { ManualClock, OccurrenceId, SeededRandom } from '../../lib/core/index.js';
import { MemoryJobStore } from '../../lib/store/index.js';
import { FunctionInvoker, MINT_COALESCE_MS, ScheduleMinter, WorkerNode, type JobContext, type Timers } from '../../lib/worker/index.js';
import { ManualTimers, settle } from '../support/manual-timers.js';

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
    const { schedule } = await store.scheduleUpsert({ schedule: { name: 'tick', everyMs: 60_000 } });
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
    const { schedule } = await store.scheduleUpsert({ schedule: { name: 'tick', everyMs: 60_000, misfireGraceMs: 10_000 } });
    timers.clock.advance(10 * 60_000 + 30_000); // the node was down for ten ticks
    await node.start();
    await timers.advance(0);
    expect(runs).toEqual([]);
    expect(await store.scheduleGet({ scheduleId: schedule.id })).toMatchObject({ skippedTicks: 10, lastSkipReason: 'missed' });
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
    const { schedule } = await store.scheduleUpsert({ schedule: { name: 'tick', everyMs: 60_000, noOverlap: true } });
    await node.start();
    await timers.advance(3 * 60_000);
    expect(runs).toHaveLength(1);
    expect(await store.scheduleGet({ scheduleId: schedule.id })).toMatchObject({ skippedTicks: 2, lastSkipReason: 'overlap' });
    release();
    await timers.advance(60_000);
    expect(runs).toHaveLength(2);
  });
});

/** Timers that fire only when the test says so, one callback at a time. */
class SteppedTimers implements Timers {
  private queue: { id: number; callback: () => void }[] = [];
  private ids = 0;

  setTimeout(callback: () => void): unknown {
    const id = ++this.ids;
    this.queue.push({ id, callback });
    return id;
  }

  clearTimeout(handle: unknown): void {
    this.queue = this.queue.filter((t) => t.id !== handle);
  }

  get pending(): number {
    return this.queue.length;
  }

  /** Fires the oldest timer, then lets the promises it started settle. */
  async fire(): Promise<void> {
    this.queue.shift()!.callback();
    await settle(10);
  }
}

describe('issue 19 item 1: the minter catches up one bounded pass per timer turn', () => {
  it('runs one store pass per timer callback, so a long catch-up lets other timers in and stop() returns after the pass in flight', async () => {
    const clock = new ManualClock();
    const store = new MemoryJobStore({ clock });
    for (const name of ['a', 'b', 'c']) await store.scheduleUpsert({ schedule: { name, everyMs: 60_000 } });
    clock.advance(60_000);
    const timers = new SteppedTimers();
    const minter = new ScheduleMinter(store, timers, { log() {}, warn() {}, error() {} }, { maxIdleMs: 15_000, batch: 1 });
    minter.start();
    await timers.fire();
    // Three schedules are due and a pass takes one: the other two wait for the next turns.
    expect(minter.passes).toBe(1);
    expect((await store.jobList({ limit: 10 })).length).toBe(1);
    expect(timers.pending).toBe(1);
    await minter.stop();
    expect(timers.pending).toBe(0);
    expect(minter.passes).toBe(1);
  });

  it('after ten years down, logs a cron schedule\'s skipped count as the lower bound it is, and mints its grace window pass by pass', async () => {
    const clock = new ManualClock();
    const store = new MemoryJobStore({ clock });
    const { schedule } = await store.scheduleUpsert({ schedule: { name: 'tick', cron: '* * * * * *', misfireGraceMs: 30 * 60_000 } });
    clock.advance(10 * 365 * 86_400_000);
    const warnings: string[] = [];
    const timers = new SteppedTimers();
    const minter = new ScheduleMinter(store, timers, { log() {}, warn: (m) => void warnings.push(m), error() {} }, { maxIdleMs: 15_000, batch: 100 });
    minter.start();
    await timers.fire();
    expect(warnings).toEqual([`1 schedule(s) skipped at least 1001 tick(s) (1001 missed while no worker was minting): schedule ${schedule.id}.`]);
    expect(store.rows()).toHaveLength(1_000);
    await timers.fire();
    // 30 minutes of seconds, and the tick at the start of the grace: 1,801 jobs in two passes.
    expect(store.rows()).toHaveLength(1_801);
    expect(minter.passes).toBe(2);
    await minter.stop();
  });
});

describe('issue 24: a pass takes every tick due, and ticks that crowd together share one', () => {
  it('mints 100 schedules whose ticks are 10 ms apart in passes 200 ms apart, each job at most that late', async () => {
    const runs: Array<{ scheduledFor: number; at: number }> = [];
    const { timers, store, node } = setup((_p, ctx) => void runs.push({ scheduledFor: ctx.scheduledFor.getTime(), at: timers.clock.now() }));
    for (let i = 0; i < 100; i++) {
      await store.scheduleUpsert({ schedule: { name: 'tick', everyMs: 10_000 } });
      timers.clock.advance(10);
    }
    await node.start();
    await timers.advance(30_000);
    // Three rounds of 100 ticks, each minted once and run within the coalescing window.
    const ticks = runs.map((r) => r.scheduledFor);
    expect(new Set(ticks).size).toBe(ticks.length);
    expect(ticks.length).toBeGreaterThanOrEqual(290);
    expect(Math.max(...runs.map((r) => r.at - r.scheduledFor))).toBeLessThanOrEqual(MINT_COALESCE_MS);
    // A pass per tick would be about 300; coalesced, a round of 1 s of ticks takes about 5.
    expect(node.minter.passes).toBeLessThan(40);
  });

  it('after an outage logs one line for the pass, with counts, not one per schedule', async () => {
    const warnings: string[] = [];
    const timers = new ManualTimers();
    const store = new MemoryJobStore({ clock: timers.clock });
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) ids.push((await store.scheduleUpsert({ schedule: { name: 'tick', everyMs: 60_000, misfireGraceMs: 10_000 } })).schedule.id);
    timers.clock.advance(10 * 60_000 + 30_000);
    const minter = new ScheduleMinter(store, timers, { log() {}, warn: (m) => void warnings.push(m), error() {} }, { maxIdleMs: 15_000, batch: 1_000 });
    minter.start();
    await timers.advance(0);
    expect(warnings).toEqual([`20 schedule(s) skipped 200 tick(s) (200 missed while no worker was minting): schedule ${ids.slice(0, 3).join(', ')}, and 17 more.`]);
    await minter.stop();
  });
});
