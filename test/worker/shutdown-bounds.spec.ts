import { afterEach, describe, expect, it } from '@jest/globals';
import { SeededRandom } from '../../lib/core/index.js';
import { MemoryJobStore } from '../../lib/store/index.js';
import { FunctionInvoker, STOP_OVERRUN_MS, WorkerNode, type FunctionHandler, type SchedulerLogger, type TransitionObserver } from '../../lib/worker/index.js';
import { Holds } from '../support/held-store.js';
import { ManualTimers, settle } from '../support/manual-timers.js';

const nodes: WorkerNode[] = [];
afterEach(() => {
  nodes.splice(0);
});

function setup(handlers: Record<string, FunctionHandler<never>>, holds: Holds, extra: { observers?: TransitionObserver[]; scheduling?: boolean } = {}) {
  const timers = new ManualTimers();
  const memory = new MemoryJobStore({ clock: timers.clock });
  const warnings: string[] = [];
  const logger: SchedulerLogger = { log: () => undefined, warn: (m: string) => void warnings.push(m), error: () => undefined };
  const node = new WorkerNode({
    store: holds.wrap(memory),
    invoker: new FunctionInvoker(handlers),
    options: { concurrency: 2, pollIntervalMs: 1_000, heartbeatIntervalMs: 10_000, leaseMs: 30_000, shutdownGraceMs: 2_000, workerId: 'node-1', scheduling: extra.scheduling ?? false },
    clock: timers.clock,
    timers,
    random: new SeededRandom(1n),
    logger,
    observers: extra.observers,
  });
  nodes.push(node);
  return { timers, memory, node, warnings };
}

function track(promise: Promise<void>) {
  const state = { done: false };
  void promise.then(() => (state.done = true));
  return state;
}

describe('issue 19 item 3: a node stop never waits on an unbounded await', () => {
  it('stops within shutdownGraceMs + STOP_OVERRUN_MS when a claim never comes back', async () => {
    const holds = new Holds();
    const { timers, memory, node, warnings } = setup({ work: { handle: () => undefined } }, holds);
    await node.start();
    await settle();
    holds.hold('jobClaim');
    await memory.jobEnqueue({ job: { name: 'work', payload: 1 } });
    await timers.advance(1_000); // the poll sends a claim, which hangs
    expect(holds.calls('jobClaim')).toBe(1);

    const stopped = track(node.stop());
    await timers.advance(2_000 + STOP_OVERRUN_MS - 1);
    expect(stopped.done).toBe(false); // a claim in flight is waited for, up to the deadline
    await timers.advance(1);
    expect(stopped.done).toBe(true);
    expect(node.status).not.toBe('running');
    expect(warnings.some((w) => w.includes('without waiting any longer'))).toBe(true);
  });

  it('stops in time when the hand-back of an unfinished attempt never comes back', async () => {
    const holds = new Holds();
    let release!: () => void;
    const stuck = new Promise<void>((resolve) => (release = resolve));
    const { timers, memory, node } = setup({ stuck: { handle: () => stuck } }, holds);
    await memory.jobEnqueue({ job: { name: 'stuck', payload: 1 } });
    await node.start();
    await settle();
    expect(node.inFlight).toBe(1);
    holds.hold('jobRelinquishMany');

    const stopped = track(node.stop());
    await timers.advance(2_000); // grace over: the attempt is aborted and handed back, and the hand-back hangs
    expect(holds.calls('jobRelinquishMany')).toBe(1);
    expect(stopped.done).toBe(false);
    await timers.advance(STOP_OVERRUN_MS);
    expect(stopped.done).toBe(true);
    release();
  });

  it('a stop during start makes start give up: nothing starts once the held registration returns', async () => {
    const holds = new Holds();
    holds.hold('observerLease');
    const observer: TransitionObserver = { id: 'o', to: ['succeeded'], deliver: async () => undefined };
    const { timers, memory, node } = setup({ work: { handle: () => undefined } }, holds, { observers: [observer], scheduling: true });
    const subscribe = jest_spy(memory, 'subscribeWakeHints');
    const starting = node.start();
    await settle();
    expect(holds.calls('observerLease')).toBe(1);

    const stopped = track(node.stop());
    await timers.advance(2_000 + STOP_OVERRUN_MS);
    expect(stopped.done).toBe(true); // the deadline bounds a start that hangs, too

    holds.release('observerLease');
    await starting;
    await memory.jobEnqueue({ job: { name: 'work', payload: 1 } });
    await timers.advance(60_000);
    expect(subscribe.calls).toBe(0); // no hint subscription (no LISTEN connection) was opened
    expect(node.stats.claimed).toBe(0);
    expect(node.minter.passes).toBe(0);
    expect(node.status).toBe('stopped');
  });

  it('a stop during start that start honours in time stops at once, without waiting for the deadline', async () => {
    const holds = new Holds();
    holds.hold('observerLease');
    const observer: TransitionObserver = { id: 'o', to: ['succeeded'], deliver: async () => undefined };
    const { timers, node } = setup({}, holds, { observers: [observer] });
    const starting = node.start();
    await settle();
    const stopped = track(node.stop());
    holds.release('observerLease');
    await starting;
    await settle();
    expect(stopped.done).toBe(true);
    expect(node.status).toBe('stopped');
    const calls = holds.log.length;
    await timers.advance(60_000);
    // No poll, heartbeat or maintenance timer was left running: the store hears nothing more.
    expect(holds.log.slice(calls)).toEqual([]);
  });

  it('a minting pass that never comes back holds stop up only until the deadline', async () => {
    const holds = new Holds();
    holds.hold('scheduleMintDue');
    const { timers, node } = setup({}, holds, { scheduling: true });
    await node.start();
    await timers.advance(0);
    expect(holds.calls('scheduleMintDue')).toBe(1);
    const stopped = track(node.stop());
    await timers.advance(2_000 + STOP_OVERRUN_MS - 1);
    expect(stopped.done).toBe(false);
    await timers.advance(1);
    expect(stopped.done).toBe(true);
  });
});

/** Counts calls of one method without changing it. */
function jest_spy(target: object, method: string): { calls: number } {
  const counter = { calls: 0 };
  const original = (target as Record<string, (...args: unknown[]) => unknown>)[method]!;
  (target as Record<string, unknown>)[method] = (...args: unknown[]) => {
    counter.calls += 1;
    return original.apply(target, args);
  };
  return counter;
}
