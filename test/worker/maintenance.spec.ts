import { describe, expect, it } from '@jest/globals';
import { SeededRandom } from '../../lib/core/index.js';
import { MemoryJobStore, type JobStore } from '../../lib/store/index.js';
import { FunctionInvoker, WorkerNode, type SchedulerLogger } from '../../lib/worker/index.js';
import { Holds } from '../support/held-store.js';
import { ManualTimers } from '../support/manual-timers.js';

const INTERVAL_MS = 15_000;

function quietLogger(warnings: string[]): SchedulerLogger {
  return { log: () => undefined, warn: (m: string) => void warnings.push(m), error: () => undefined };
}

function node(store: JobStore, timers: ManualTimers, workerId: string, warnings: string[], shutdownGraceMs = 2_000) {
  return new WorkerNode({
    store,
    invoker: new FunctionInvoker({}),
    options: { workerId, scheduling: false, maintenanceIntervalMs: INTERVAL_MS, pollIntervalMs: 60_000, heartbeatIntervalMs: 10_000, shutdownGraceMs },
    clock: timers.clock,
    timers,
    random: new SeededRandom(1n),
    logger: quietLogger(warnings),
  });
}

describe('the maintenance sweep', () => {
  it('runs on one node of a cluster per interval, and another node takes over once the holder stops', async () => {
    const timers = new ManualTimers();
    const holds = new Holds();
    const store = holds.wrap(new MemoryJobStore({ clock: timers.clock }));
    const warnings: string[] = [];
    const nodes = ['a', 'b', 'c'].map((id) => node(store, timers, id, warnings));
    // Started a moment apart, as nodes of a deployment are: their sweep timers fire at different instants.
    for (const n of nodes) {
      await n.start();
      await timers.advance(1_000);
    }
    const sweeps = () => holds.log.filter((call) => call === 'jobExpireLeases').length;
    const leases = () => holds.log.filter((call) => call === 'maintenanceLease').length;
    const before = sweeps();
    await timers.advance(10 * INTERVAL_MS);
    // Every node asks every interval; only the holder sweeps.
    expect(leases()).toBeGreaterThanOrEqual(30);
    expect(sweeps() - before).toBe(10);

    // The holder stops: within two intervals one of the others sweeps, and again one per interval.
    const holder = nodes[0]!;
    await holder.stop();
    const afterStop = sweeps();
    await timers.advance(2 * INTERVAL_MS);
    expect(sweeps() - afterStop).toBeGreaterThanOrEqual(1);
    const settled = sweeps();
    await timers.advance(10 * INTERVAL_MS);
    expect(sweeps() - settled).toBe(10);
    for (const n of nodes.slice(1)) await n.stop();
    expect(warnings).toEqual([]);
  });

  it('trims the history and folds the job counts on every sweep it runs, the trim no longer once an hour', async () => {
    const timers = new ManualTimers();
    const holds = new Holds();
    const store = holds.wrap(new MemoryJobStore({ clock: timers.clock }));
    const n = node(store, timers, 'a', []);
    await n.start();
    await timers.advance(3 * INTERVAL_MS);
    expect(holds.log.filter((call) => call === 'historyTrim')).toHaveLength(3);
    expect(holds.log.filter((call) => call === 'jobCountsFold')).toHaveLength(3);
    await n.stop();
  });

  it('a stop during a sweep waits for the statement in flight, starts no other, and logs nothing', async () => {
    const timers = new ManualTimers();
    const holds = new Holds();
    const memory = new MemoryJobStore({ clock: timers.clock });
    const store = holds.wrap(memory);
    const warnings: string[] = [];
    const n = node(store, timers, 'a', warnings);
    holds.hold('jobPurge');
    await n.start();
    await timers.advance(INTERVAL_MS);
    expect(holds.calls('jobPurge')).toBe(1);

    let stopped = false;
    const stopping = n.stop().then(() => (stopped = true));
    await timers.advance(500);
    // The purge is still out: the store must stay open until it is back.
    expect(stopped).toBe(false);
    const callsAtStop = holds.log.length;
    holds.release('jobPurge');
    await timers.advance(0);
    await stopping;
    expect(stopped).toBe(true);
    // Nothing after the purge: the trim that would have followed never started.
    expect(holds.log.slice(callsAtStop).filter((call) => ['historyTrim', 'jobPurge', 'jobExpireLeases', 'jobSettleDependencies', 'jobCountsFold'].includes(call))).toEqual([]);
    expect(warnings).toEqual([]);
  });

  it('a sweep statement that never returns holds stop up only until the deadline, and its late failure is not a warning', async () => {
    const timers = new ManualTimers();
    const holds = new Holds();
    const store = holds.wrap(new MemoryJobStore({ clock: timers.clock }));
    const warnings: string[] = [];
    const n = node(store, timers, 'a', warnings, 1_000);
    holds.hold('historyTrim');
    await n.start();
    await timers.advance(INTERVAL_MS);
    expect(holds.calls('historyTrim')).toBe(1);
    let stopped = false;
    void n.stop().then(() => (stopped = true));
    await timers.advanceUntil(() => stopped, 100, 60_000);
    expect(warnings.filter((w) => w.startsWith('maintenance'))).toEqual([]);
  });
});
