import { afterEach, describe, expect, it } from '@jest/globals';
import { InvalidArgumentError, ManualClock, PayloadTooLargeError, ProgressRefusedError, SeededRandom } from '../../lib/core/index.js';
import { MemoryJobStore, type HeartbeatParams, type JobStore } from '../../lib/store/index.js';
import { FunctionInvoker, WorkerNode, type FunctionHandler, type JobContext, type SchedulerLogger } from '../../lib/worker/index.js';
import { ManualTimers, settle } from '../support/manual-timers.js';

const nodes: WorkerNode[] = [];
afterEach(async () => {
  for (const node of nodes.splice(0)) if (node.status !== 'stopped') void node.stop();
});

/** A handler that hands its context to the test and runs until released. */
function held() {
  let release!: () => void;
  let context!: JobContext;
  const released = new Promise<void>((resolve) => (release = resolve));
  const handler: FunctionHandler<never> = {
    handle: async (_payload, ctx) => {
      context = ctx as JobContext;
      await released;
    },
  };
  return { handler, release, ctx: () => context };
}

function setup(handlers: Record<string, FunctionHandler<never>>, options: { storeClock?: ManualClock; limits?: { maxProgressBytes: number } } = {}) {
  const timers = new ManualTimers();
  const memory = new MemoryJobStore({ clock: options.storeClock ?? timers.clock, limits: options.limits });
  const beats: HeartbeatParams[] = [];
  const warnings: string[] = [];
  const logger: SchedulerLogger = { log: () => undefined, warn: (message) => warnings.push(message), error: () => undefined };
  // Every heartbeat the node sends, as it sent it.
  const store = new Proxy(memory, {
    get(target, prop, receiver) {
      if (prop === 'jobHeartbeat') return (params: HeartbeatParams) => (beats.push(params), target.jobHeartbeat(params));
      const value = Reflect.get(target, prop, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  }) as JobStore;
  const node = new WorkerNode({
    store,
    invoker: new FunctionInvoker(handlers),
    options: { concurrency: 2, pollIntervalMs: 1_000, heartbeatIntervalMs: 10_000, leaseMs: 30_000, workerId: 'node-1' },
    clock: timers.clock,
    timers,
    random: new SeededRandom(7n),
    logger,
  });
  nodes.push(node);
  const withProgress = () => beats.filter((beat) => beat.leases.some((lease) => 'progress' in lease));
  return { timers, memory, node, beats, withProgress, warnings };
}

async function progressOf(store: JobStore, id: string): Promise<unknown> {
  return (await store.jobGet({ jobId: id }))!.progress;
}

describe('ctx.reportProgress', () => {
  it('coalesces reports onto the next heartbeat: the latest value wins, one write per interval, every waiter resolved', async () => {
    const h = held();
    const { timers, memory, node, beats, withProgress } = setup({ long: h.handler });
    const { id } = await memory.jobEnqueue({ job: { name: 'long', payload: 1 } });
    await node.start();
    await settle();
    const results: string[] = [];
    // Each caller waits for the write of its value, or of a later one that replaced it.
    const reports = [1, 2, 3].map((n) => {
      void h.ctx().reportProgress({ done: n });
      return h.ctx().progressWritten().then(() => results.push(`resolved ${n}`));
    });
    await timers.advance(9_000);
    // Nothing is written before the heartbeat: reporting costs no statement of its own.
    expect([await progressOf(memory, id), beats.length, results]).toEqual([null, 0, []]);
    await timers.advance(1_000);
    await Promise.all(reports);
    expect(await progressOf(memory, id)).toEqual({ done: 3 });
    expect(beats.map((beat) => beat.leases)).toEqual([[{ jobId: id, attempt: 1, progress: { done: 3 } }]]);
    expect(results).toEqual(['resolved 1', 'resolved 2', 'resolved 3']);

    // The next heartbeat, with nothing new reported, renews the lease alone.
    await timers.advance(10_000);
    expect(beats.map((beat) => beat.leases)).toEqual([[{ jobId: id, attempt: 1, progress: { done: 3 } }], [{ jobId: id, attempt: 1 }]]);
    expect(withProgress()).toHaveLength(1);
    h.release();
    await settle();
    expect((await memory.jobGet({ jobId: id }))!.state).toBe('succeeded');
    // The value was written already: the end of the attempt sends no further write.
    expect(withProgress()).toHaveLength(1);
  });

  it('writes the last value when the handler returns, before its outcome, without waiting for a heartbeat', async () => {
    const { timers, memory, node, withProgress } = setup({
      quick: {
        handle: (_payload, ctx) => {
          void ctx.reportProgress('half');
          void ctx.reportProgress('100%');
        },
      },
    });
    const { id } = await memory.jobEnqueue({ job: { name: 'quick', payload: 1 } });
    await node.start();
    await timers.advance(100);
    expect(await memory.jobGet({ jobId: id })).toMatchObject({ state: 'succeeded', progress: '100%' });
    expect(withProgress().map((beat) => beat.leases)).toEqual([[{ jobId: id, attempt: 1, progress: '100%' }]]);
  });

  it('keeps the last value of a failed attempt, written before the failure is recorded', async () => {
    const { timers, memory, node } = setup({
      failing: {
        handle: async (_payload, ctx) => {
          void ctx.reportProgress({ step: 'upload' });
          throw new Error('boom');
        },
      },
    });
    const { id } = await memory.jobEnqueue({ job: { name: 'failing', payload: 1, maxAttempts: 1 } });
    await node.start();
    await timers.advance(100);
    expect(await memory.jobGet({ jobId: id })).toMatchObject({ state: 'dead_lettered', progress: { step: 'upload' } });
  });

  it('sends a heartbeat without progress, and no statement at the end, when the handler never reports', async () => {
    const h = held();
    const { timers, memory, node, beats } = setup({ silent: h.handler });
    const { id } = await memory.jobEnqueue({ job: { name: 'silent', payload: 1 } });
    await node.start();
    await timers.advance(10_000);
    h.release();
    await settle();
    expect(beats.map((beat) => beat.leases)).toEqual([[{ jobId: id, attempt: 1 }]]);
    expect(await memory.jobGet({ jobId: id })).toMatchObject({ state: 'succeeded', progress: null });
  });

  it("refuses a stale worker's progress, says so to the handler and warns once, and leaves the live attempt's value", async () => {
    const h = held();
    const storeClock = new ManualClock();
    const { timers, memory, node, warnings } = setup({ slow: h.handler }, { storeClock });
    const { id } = await memory.jobEnqueue({ job: { name: 'slow', payload: 1, maxAttempts: 3 } });
    await node.start();
    await settle();
    // The store's lease lapses while the node's clock stands still; another worker takes the job and reports.
    storeClock.advance(31_000);
    await memory.jobClaim({ workerId: 'worker-b', limit: 1, queues: ['default'], leaseMs: 30_000 });
    await memory.jobHeartbeat({ workerId: 'worker-b', leases: [{ jobId: id, attempt: 2, progress: 'b' }], leaseMs: 30_000 });

    // Accepted locally: the node does not know yet that its lease is gone.
    await h.ctx().reportProgress('stale 1');
    const first = h.ctx().progressWritten();
    await h.ctx().reportProgress('stale 2');
    const second = h.ctx().progressWritten();
    await timers.advance(10_000);
    await expect(first).rejects.toBeInstanceOf(ProgressRefusedError);
    await expect(second).rejects.toThrow(`Progress for job ${id} attempt 1 was refused: this worker no longer holds that attempt's lease.`);
    // Later reports of the lost attempt are refused at once, without another write.
    await expect(h.ctx().reportProgress('stale 3')).rejects.toBeInstanceOf(ProgressRefusedError);
    await expect(h.ctx().progressWritten()).rejects.toBeInstanceOf(ProgressRefusedError);
    h.release();
    await settle();
    expect(await progressOf(memory, id)).toBe('b');
    expect(warnings.filter((line) => line.includes('progress'))).toEqual([`progress of ${id} attempt 1 was refused: this worker no longer holds the lease.`]);
  });

  it('throws bad input at the call, before anything is written, and refuses a report made after the attempt ended', async () => {
    const h = held();
    const { timers, memory, node, beats } = setup({ bad: h.handler }, { limits: { maxProgressBytes: 16 } });
    const { id } = await memory.jobEnqueue({ job: { name: 'bad', payload: 1 } });
    await node.start();
    await settle();
    const ctx = h.ctx();
    expect(() => ctx.reportProgress('x'.repeat(20))).toThrow(PayloadTooLargeError);
    expect(() => ctx.reportProgress(() => 1)).toThrow(InvalidArgumentError);
    expect(() => ctx.reportProgress(undefined)).toThrow(/progress must be a JSON value/);
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(() => ctx.reportProgress(cyclic)).toThrow(InvalidArgumentError);
    await timers.advance(10_000);
    expect(beats.map((beat) => beat.leases)).toEqual([[{ jobId: id, attempt: 1 }]]);
    h.release();
    await settle();
    expect(await progressOf(memory, id)).toBeNull();
    await expect(ctx.reportProgress('late')).rejects.toBeInstanceOf(ProgressRefusedError);
  });

  it('keeps a value whose heartbeat failed, and sends it with the next one', async () => {
    const h = held();
    const timers = new ManualTimers();
    const memory = new MemoryJobStore({ clock: timers.clock });
    let failing = true;
    const store = new Proxy(memory, {
      get(target, prop, receiver) {
        if (prop === 'jobHeartbeat') return (params: HeartbeatParams) => (failing ? Promise.reject(new Error('network down')) : target.jobHeartbeat(params));
        const value = Reflect.get(target, prop, receiver);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    }) as JobStore;
    const node = new WorkerNode({
      store,
      invoker: new FunctionInvoker({ flaky: h.handler }),
      options: { concurrency: 1, pollIntervalMs: 1_000, heartbeatIntervalMs: 10_000, leaseMs: 30_000, workerId: 'node-1' },
      clock: timers.clock,
      timers,
      random: new SeededRandom(7n),
    });
    nodes.push(node);
    const { id } = await memory.jobEnqueue({ job: { name: 'flaky', payload: 1 } });
    await node.start();
    await settle();
    let resolved = false;
    await h.ctx().reportProgress(1);
    void h.ctx().progressWritten().then(() => (resolved = true));
    await timers.advance(10_000);
    expect([await progressOf(memory, id), resolved]).toEqual([null, false]);
    failing = false;
    await timers.advance(10_000);
    expect([await progressOf(memory, id), resolved]).toEqual([1, true]);
    h.release();
    await settle();
  });
  it('issue 35 item 15: three awaited reports complete without any heartbeat tick, and the latest rides on the next one', async () => {
    const h = held();
    const steps: string[] = [];
    const handler: FunctionHandler<never> = {
      handle: async (payload, ctx) => {
        for (const done of [1, 2, 3]) {
          await ctx.reportProgress({ done });
          steps.push(`reported ${done}`);
        }
        await h.handler.handle(payload, ctx);
      },
    };
    const { timers, memory, node, beats } = setup({ looping: handler });
    const { id } = await memory.jobEnqueue({ job: { name: 'looping', payload: 1 } });
    await node.start();
    // No timer fires here: the claim and the handler run on promise callbacks alone.
    await settle();
    expect(steps).toEqual(['reported 1', 'reported 2', 'reported 3']);
    expect([beats.length, await progressOf(memory, id)]).toEqual([0, null]);
    // Accepted is not written: the value still waits for the heartbeat, which stays fenced.
    let written = false;
    void h.ctx().progressWritten().then(() => (written = true));
    await timers.advance(10_000);
    expect(beats.map((beat) => beat.leases)).toEqual([[{ jobId: id, attempt: 1, progress: { done: 3 } }]]);
    expect([await progressOf(memory, id), written]).toEqual([{ done: 3 }, true]);
    h.release();
    await settle();
  });

  it('issue 35 item 15: a report made once the node knows its lease is gone rejects at once, so an awaiting handler stops', async () => {
    const h = held();
    const storeClock = new ManualClock();
    const { timers, memory, node, beats } = setup({ slow: h.handler }, { storeClock });
    const { id } = await memory.jobEnqueue({ job: { name: 'slow', payload: 1, maxAttempts: 3 } });
    await node.start();
    await settle();
    storeClock.advance(31_000);
    await memory.jobClaim({ workerId: 'worker-b', limit: 1, queues: ['default'], leaseMs: 30_000 });
    // The heartbeat carries no progress; it learns the lease is gone and aborts the attempt.
    await timers.advance(10_000);
    let outcome: unknown = 'pending';
    h.ctx().reportProgress('too late').then(
      () => (outcome = 'accepted'),
      (error: unknown) => (outcome = error),
    );
    await settle(1);
    expect(outcome).toBeInstanceOf(ProgressRefusedError);
    expect(h.ctx().signal.reason).toBe('lease_lost');
    h.release();
    await settle();
    // Nothing more was sent for the lost attempt: one heartbeat, without progress.
    expect(beats.map((beat) => beat.leases)).toEqual([[{ jobId: id, attempt: 1 }]]);
    expect(await progressOf(memory, id)).toBeNull();
  });
});
