import { hostname } from 'node:os';
import { afterEach, describe, expect, it } from '@jest/globals';
import { SeededRandom } from '../../lib/core/index.js';
import { MemoryJobStore, type JobStore } from '../../lib/store/index.js';
import {
  FunctionInvoker,
  NODE_RETENTION_MS,
  packageVersion,
  STOP_OVERRUN_MS,
  WorkerNode,
  type FunctionHandler,
  type SchedulerLogger,
  type WorkerOptions,
} from '../../lib/worker/index.js';
import { Holds } from '../support/held-store.js';
import { ManualTimers, settle } from '../support/manual-timers.js';

const HEARTBEAT_MS = 10_000;
const LEASE_MS = 30_000;

const nodes: WorkerNode[] = [];
afterEach(async () => {
  for (const node of nodes.splice(0)) if (node.status !== 'stopped') void node.stop();
});

function setup(options: { handlers?: Record<string, FunctionHandler<never>>; wrap?: (memory: MemoryJobStore) => JobStore; worker?: WorkerOptions } = {}) {
  const timers = new ManualTimers();
  const memory = new MemoryJobStore({ clock: timers.clock });
  const warnings: string[] = [];
  const debug: string[] = [];
  const logger: SchedulerLogger = {
    log: () => undefined,
    warn: (m: string) => void warnings.push(m),
    error: () => undefined,
    debug: (m: string) => void debug.push(m),
  };
  const node = new WorkerNode({
    store: options.wrap ? options.wrap(memory) : memory,
    invoker: new FunctionInvoker(options.handlers ?? {}),
    options: {
      concurrency: 3,
      queues: ['default', 'mail'],
      pollIntervalMs: 1_000,
      heartbeatIntervalMs: HEARTBEAT_MS,
      leaseMs: LEASE_MS,
      shutdownGraceMs: 2_000,
      maintenanceIntervalMs: 60_000,
      scheduling: false,
      workerId: 'node-1',
      ...options.worker,
    },
    clock: timers.clock,
    timers,
    random: new SeededRandom(1n),
    logger,
  });
  nodes.push(node);
  return { timers, memory, node, warnings, debug };
}

/** A handler that waits until the test releases it, recording its signal. */
function blocking() {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const signals: AbortSignal[] = [];
  const handler: FunctionHandler<never> = {
    handle: async (_payload, ctx) => {
      signals.push(ctx.signal);
      await released;
    },
  };
  return { handler, release, signals };
}

/** The store with the registry's writes failing every time, and every other call let through. */
function failingBeats(memory: MemoryJobStore): JobStore {
  return new Proxy(memory, {
    get: (target, prop, receiver) => {
      if (prop === 'nodeBeat' || prop === 'nodeStop') return () => Promise.reject(new Error('relation "nodes" does not exist'));
      const value = Reflect.get(target, prop, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

describe('the node registry, written by the worker', () => {
  it('registers an idle node at start and beats on the heartbeat cadence, with no lease and no heartbeat', async () => {
    const holds = new Holds();
    const { timers, memory, node } = setup({ wrap: (m) => holds.wrap(m) });
    const startedAt = timers.clock.now();
    await node.start();
    await settle();
    const beats = () => holds.log.filter((call) => call === 'nodeBeat').length;
    expect(beats()).toBe(1);
    expect(await memory.nodeList()).toEqual([
      {
        id: 'node-1',
        host: hostname(),
        pid: process.pid,
        version: packageVersion(),
        queues: ['default', 'mail'],
        concurrency: 3,
        finish: 'keep',
        running: 0,
        startedAt: new Date(startedAt),
        lastSeenAt: new Date(startedAt),
        stoppedAt: null,
      },
    ]);
    for (let tick = 1; tick <= 3; tick++) {
      await timers.advance(HEARTBEAT_MS - 1);
      expect(beats()).toBe(tick); // not before the interval is up
      await timers.advance(1);
      expect(beats()).toBe(tick + 1);
      expect((await memory.nodeList())[0]).toMatchObject({ startedAt: new Date(startedAt), lastSeenAt: new Date(startedAt + tick * HEARTBEAT_MS) });
    }
    expect(holds.log).not.toContain('jobHeartbeat');
  });

  it('reports the handlers it runs at each beat', async () => {
    const b = blocking();
    const { timers, memory, node } = setup({ handlers: { slow: b.handler } });
    await memory.jobEnqueueMany({ jobs: [1, 2].map((n) => ({ name: 'slow', payload: n })) });
    await node.start();
    await settle();
    await timers.advance(HEARTBEAT_MS);
    expect((await memory.nodeList())[0]).toMatchObject({ running: 2 });
    b.release();
    await settle();
    await timers.advance(HEARTBEAT_MS);
    expect((await memory.nodeList())[0]).toMatchObject({ running: 0 });
  });

  it('keeps renewing its leases while every beat fails, warning once about the registry', async () => {
    const b = blocking();
    const { timers, memory, node, warnings, debug } = setup({ handlers: { slow: b.handler }, wrap: failingBeats });
    const { id } = await memory.jobEnqueue({ job: { name: 'slow', payload: 1 } });
    await node.start();
    await settle();
    // Five lease lengths: without its heartbeats the lease would have lapsed four times over.
    for (let waited = 0; waited < 5 * LEASE_MS; waited += HEARTBEAT_MS) {
      await timers.advance(HEARTBEAT_MS);
      const job = await memory.jobGet({ jobId: id });
      expect(job).toMatchObject({ state: 'running', attempt: 1, workerId: 'node-1' });
      expect(job!.leasedUntil!.getTime()).toBe(timers.clock.now() + LEASE_MS);
    }
    expect(b.signals[0]!.aborted).toBe(false);
    expect(node.stats.leasesLost).toBe(0);
    expect(warnings).toEqual([expect.stringMatching(/^registry beat failed \(Error: relation "nodes" does not exist\); .* leases are not affected\.$/)]);
    expect(debug.filter((line) => line.startsWith('registry beat failed')).length).toBeGreaterThanOrEqual(14);
    b.release();
    await settle();
    expect(await memory.jobGet({ jobId: id })).toMatchObject({ state: 'succeeded', attempt: 1 });
    expect(await memory.nodeList()).toEqual([]);
    // Its stop record fails too, and says so at debug: the failing beats were warned about already.
    await node.stop();
    expect(warnings).toHaveLength(1);
    expect(debug.some((line) => line.startsWith('recording the stop in the node registry failed'))).toBe(true);
  });

  it('records its graceful stop in the registry', async () => {
    const { timers, memory, node } = setup();
    await node.start();
    await timers.advance(HEARTBEAT_MS + 500);
    await node.stop();
    const [row] = await memory.nodeList();
    expect(row).toMatchObject({ id: 'node-1', running: 0, stoppedAt: new Date(timers.clock.now()), lastSeenAt: new Date(timers.clock.now()) });
  });

  it('does not let a stop record that never comes back hold the stop past its deadline', async () => {
    const holds = new Holds();
    holds.hold('nodeStop');
    const { timers, memory, node, warnings } = setup({ wrap: (m) => holds.wrap(m) });
    await node.start();
    await settle();
    const state = { done: false };
    void node.stop().then(() => (state.done = true));
    await timers.advance(0);
    expect(holds.calls('nodeStop')).toBe(1);
    await timers.advance(2_000 + STOP_OVERRUN_MS - 1);
    expect(state.done).toBe(false);
    await timers.advance(1);
    expect(state.done).toBe(true);
    expect(warnings.filter((w) => w.includes('registry'))).toEqual([]);
    expect((await memory.nodeList())[0]!.stoppedAt).toBeNull();
  });

  it('sends no stop record for a node that never registered', async () => {
    const holds = new Holds();
    const { node } = setup({ wrap: (m) => holds.wrap(m) });
    await node.stop();
    expect(holds.log).toEqual([]);
  });

  it('prunes nodes not seen for a day in the maintenance sweep, and keeps itself', async () => {
    // Long intervals, so that a virtual day passes in few timer callbacks.
    const hour = 3_600_000;
    const { timers, memory, node } = setup({ worker: { pollIntervalMs: hour, heartbeatIntervalMs: hour, leaseMs: 2 * hour, maintenanceIntervalMs: hour } });
    const beat = { host: 'old-host', pid: 1, version: '0.0.1', queues: ['default'], concurrency: 1, running: 0 };
    await memory.nodeBeat({ id: 'crashed', ...beat });
    await memory.nodeBeat({ id: 'stopped', ...beat });
    await memory.nodeStop({ id: 'stopped' });
    await node.start();
    await timers.advance(NODE_RETENTION_MS);
    // Exactly a day unseen is still kept; a moment more is not.
    expect((await node.sweep()).prunedNodes).toBe(0);
    await memory.nodeBeat({ id: 'recent', ...beat });
    await timers.advance(1);
    expect((await node.sweep()).prunedNodes).toBe(2);
    expect((await memory.nodeList()).map((row) => row.id).sort()).toEqual(['node-1', 'recent']);
  });
});
