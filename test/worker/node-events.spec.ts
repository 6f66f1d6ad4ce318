import { afterEach, describe, expect, it } from '@jest/globals';
import { ManualClock, SeededRandom } from '../../lib/core/index.js';
import { MemoryJobStore, type JobStore } from '../../lib/store/index.js';
import { FunctionInvoker, WorkerNode, type FunctionHandler, type SchedulerLogger, type WorkerNodeEvents } from '../../lib/worker/index.js';
import { ManualTimers, settle } from '../support/manual-timers.js';

const SECRET = { card: '4111-1111-1111-1111' };

const nodes: WorkerNode[] = [];
afterEach(async () => {
  for (const node of nodes.splice(0)) if (node.status !== 'stopped') void node.stop();
});

/** Every event the node emits, in order, as [name, payload]. */
function record(node: WorkerNode): Array<[keyof WorkerNodeEvents, unknown]> {
  const seen: Array<[keyof WorkerNodeEvents, unknown]> = [];
  for (const name of ['attemptStarted', 'settled', 'leaseLost', 'claimFailed', 'stateChanged'] as const) {
    node.events.on(name, (event: unknown) => seen.push([name, event]));
  }
  return seen;
}

function setup(handlers: Record<string, FunctionHandler<never>>, options: { store?: (memory: MemoryJobStore) => JobStore; storeClock?: ManualClock; logger?: SchedulerLogger } = {}) {
  const timers = new ManualTimers();
  const memory = new MemoryJobStore({ clock: options.storeClock ?? timers.clock });
  const node = new WorkerNode({
    store: options.store ? options.store(memory) : memory,
    invoker: new FunctionInvoker(handlers),
    options: { concurrency: 2, pollIntervalMs: 1_000, heartbeatIntervalMs: 10_000, leaseMs: 30_000, workerId: 'node-1' },
    clock: timers.clock,
    timers,
    random: new SeededRandom(3n),
    logger: options.logger,
  });
  nodes.push(node);
  return { timers, memory, node, seen: record(node) };
}

function blocking() {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  return { handler: { handle: async () => released } as FunctionHandler<never>, release };
}

/** Replaces one store method, keeping the rest of the store as it is. */
function overriding<K extends keyof JobStore>(store: MemoryJobStore, name: K, replacement: JobStore[K]): JobStore {
  return new Proxy(store, {
    get(target, prop, receiver) {
      if (prop === name) return replacement;
      const value = Reflect.get(target, prop, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  }) as JobStore;
}

describe('the node’s typed events', () => {
  it('announce an attempt’s start with its wait, and its settling with its duration and outcome, without the payload', async () => {
    const b = blocking();
    const { timers, memory, node, seen } = setup({ 'card.charge': b.handler });
    const { id } = await memory.jobEnqueue({ job: { name: 'card.charge', payload: SECRET, queue: 'default', maxAttempts: 3 } });
    const runAt = (await memory.jobGet({ jobId: id }))!.runAt;
    await timers.advance(4_000); // due, but no node runs yet
    await node.start();
    await settle();
    await timers.advance(2_500); // the handler runs for 2.5 s
    b.release();
    await settle();

    const attempts = seen.filter(([name]) => name === 'attemptStarted' || name === 'settled');
    expect(attempts).toEqual([
      [
        'attemptStarted',
        { jobId: id, name: 'card.charge', queue: 'default', attempt: 1, maxAttempts: 3, workerId: 'node-1', runAt, startedAt: new Date(runAt.getTime() + 4_000), waitMs: 4_000 },
      ],
      ['settled', { jobId: id, attempt: 1, name: 'card.charge', queue: 'default', kind: 'succeeded', status: 'applied', state: 'succeeded', durationMs: 2_500 }],
    ]);
    expect(JSON.stringify(seen)).not.toContain(SECRET.card);
  });

  it('say a failed attempt’s outcome, and that the job is scheduled again', async () => {
    const { memory, node, seen } = setup({ flaky: { handle: () => Promise.reject(new Error('boom')) } });
    const { id } = await memory.jobEnqueue({ job: { name: 'flaky', payload: 1, maxAttempts: 3 } });
    await node.start();
    await settle();
    expect(seen.find(([name]) => name === 'settled')?.[1]).toMatchObject({ jobId: id, kind: 'failed', status: 'applied', state: 'scheduled' });
  });

  it('report an outcome the fence refused as stale, when the store’s lease lapsed unknown to the node', async () => {
    const b = blocking();
    const storeClock = new ManualClock();
    const { timers, memory, node, seen } = setup({ slow: b.handler }, { storeClock });
    const { id } = await memory.jobEnqueue({ job: { name: 'slow', payload: 1, maxAttempts: 3 } });
    await node.start();
    await settle();
    // The store's clock runs past the lease while the node's moves 0.4 s (before its first poll): it still believes it holds it.
    storeClock.advance(31_000);
    await timers.advance(400);
    b.release();
    await settle();
    expect(seen.filter(([name]) => name === 'settled').map(([, event]) => event)).toEqual([
      { jobId: id, attempt: 1, name: 'slow', queue: 'default', kind: 'succeeded', status: 'stale', state: undefined, durationMs: 400 },
    ]);
    expect(node.stats.staleOutcomes).toBe(1);
  });

  it('announce a lost lease with its reason, and the outcome the node then does not send as dropped', async () => {
    const b = blocking();
    let cutOff = false;
    const { timers, memory, node, seen } = setup({ isolated: b.handler }, {
      store: (store) => overriding(store, 'jobHeartbeat', (params) => (cutOff ? Promise.reject(new Error('network down')) : store.jobHeartbeat(params))),
    });
    const { id } = await memory.jobEnqueue({ job: { name: 'isolated', payload: 1 } });
    await node.start();
    await settle();
    cutOff = true;
    await timers.advance(30_000);
    expect(seen.filter(([name]) => name === 'leaseLost').map(([, event]) => event)).toEqual([{ jobId: id, attempt: 1, reason: 'lease_expired' }]);
    b.release();
    await settle();
    expect(seen.find(([name]) => name === 'settled')?.[1]).toMatchObject({ jobId: id, status: 'dropped', durationMs: 30_000 });
  });

  it('announce a failed claim, with its error but no more', async () => {
    let failing = true;
    const { timers, memory, node, seen } = setup(
      { ok: { handle: () => undefined } },
      { store: (store) => overriding(store, 'jobClaim', (params) => (failing ? Promise.reject(new Error('connection refused')) : store.jobClaim(params))) },
    );
    await memory.jobEnqueue({ job: { name: 'ok', payload: 1 } });
    await node.start();
    await settle();
    expect(seen.filter(([name]) => name === 'claimFailed').map(([, event]) => event)).toEqual([{ error: 'Error: connection refused' }]);
    failing = false;
    await timers.advance(1_000);
    expect(seen.some(([name, event]) => name === 'settled' && (event as { status: string }).status === 'applied')).toBe(true);
  });

  it('announce each state the node moves through, from idle to stopped', async () => {
    const b = blocking();
    const { timers, memory, node, seen } = setup({ long: b.handler });
    const { id } = await memory.jobEnqueue({ job: { name: 'long', payload: 1 } });
    await node.start();
    await settle();
    const stopping = node.stop();
    await settle();
    await timers.advance(30_000); // the grace period runs out with the attempt still running
    b.release();
    await settle();
    await timers.advance(10_000);
    await stopping;
    const states = seen.filter(([name]) => name === 'stateChanged').map(([, event]) => event as { from: string; to: string });
    expect(states.map(({ from, to }) => `${from}>${to}`)).toEqual(['idle>running', 'running>draining', 'draining>relinquishing', 'relinquishing>stopped']);
    // The attempt handed back at the deadline settles, named, when its handler returns: dropped, never written.
    expect(seen.find(([name]) => name === 'settled')?.[1]).toMatchObject({ jobId: id, name: 'long', queue: 'default', status: 'dropped', durationMs: 30_000 });
  });

  it('keep the node running when a listener throws, and log it', async () => {
    const lines: string[] = [];
    const logger: SchedulerLogger = { log: () => undefined, warn: (m) => lines.push(m), error: (m) => lines.push(m) };
    const { memory, node } = setup({ ok: { handle: () => undefined } }, { logger });
    const later: string[] = [];
    node.events.on('attemptStarted', () => {
      throw new Error('listener bug');
    });
    node.events.on('attemptStarted', async () => {
      throw new Error('async listener bug');
    });
    node.events.on('attemptStarted', (event) => later.push(event.jobId));
    const { id } = await memory.jobEnqueue({ job: { name: 'ok', payload: 1 } });
    const done = node.settledOnce(id);
    await node.start();
    await settle();
    await done;
    expect((await memory.jobGet({ jobId: id }))!.state).toBe('succeeded');
    // The listeners after the throwing ones still hear the event.
    expect(later).toEqual([id]);
    expect(lines).toContain("a listener of the node's attemptStarted event threw (Error: listener bug); the node carries on.");
    expect(lines).toContain("a listener of the node's attemptStarted event threw (Error: async listener bug); the node carries on.");
  });
});
