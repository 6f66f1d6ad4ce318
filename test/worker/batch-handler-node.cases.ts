import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { SeededRandom } from '../../lib/core/index.js';
import type { ConformanceTarget } from '../../lib/store-kit/conformance/index.js';
import type { JobStore } from '../../lib/store/index.js';
import {
  FunctionInvoker,
  PermanentJobError,
  WorkerNode,
  type AttemptHook,
  type BatchJob,
  type FunctionBatchHandler,
  type FunctionHandler,
  type WorkerOptions,
} from '../../lib/worker/index.js';
import { ManualTimers, settle } from '../support/manual-timers.js';

type Item = { i: number; fail?: 'retry' | 'permanent' };

/**
 * Issue 39 item 6 on a store: a batch handler takes many jobs of its name in one call, and each
 * job still ends on its own lease. The node runs on manual timers; the store on its own clock.
 */
export function runBatchHandlerNodeCases(makeTarget: () => Promise<ConformanceTarget>): void {
  let target: ConformanceTarget;
  beforeAll(async () => {
    target = await makeTarget();
  });
  afterAll(async () => {
    await target.teardown();
  });

  function node(store: JobStore, handlers: Record<string, FunctionHandler<never> | FunctionBatchHandler<never>>, options: WorkerOptions = {}, attemptHooks?: AttemptHook[]) {
    const timers = new ManualTimers();
    const worker = new WorkerNode({
      store,
      invoker: new FunctionInvoker(handlers),
      options: { scheduling: false, pollIntervalMs: 3_600_000, heartbeatIntervalMs: 10_000, leaseMs: 60_000, workerId: 'batch-1', concurrency: 2, ...options },
      clock: timers.clock,
      timers,
      random: new SeededRandom(7n),
      ...(attemptHooks ? { attemptHooks } : {}),
    });
    return { timers, worker };
  }

  /** A batch handler that records each call's payload numbers and fails the jobs their payload asks to. */
  function recordingHandler(size: number, expected: number, options: { throwOn?: number; waitMs?: number } = {}) {
    const calls: number[][] = [];
    let seen = 0;
    let done!: () => void;
    const finished = new Promise<void>((resolve) => (done = resolve));
    const handler: FunctionBatchHandler<Item> = {
      batch: { size, waitMs: options.waitMs ?? 0 },
      retry: { baseDelayMs: 60_000, maxDelayMs: 60_000, jitter: false },
      handleBatch: async (jobs: readonly BatchJob<Item>[]) => {
        calls.push(jobs.map((job) => job.payload.i));
        await settle(1);
        seen += jobs.length;
        if (seen >= expected) done();
        if (jobs.some((job) => job.payload.i === options.throwOn)) throw new Error('the bulk insert failed');
        for (const job of jobs) {
          if (job.payload.fail === 'retry') job.fail(new Error(`row ${job.payload.i} was refused`));
          else if (job.payload.fail === 'permanent') job.fail(new PermanentJobError(`row ${job.payload.i} can never be written`));
          else job.setOutput({ row: job.payload.i });
        }
      },
    };
    return { handler, calls, finished };
  }

  it('issue 39 item 6: runs the jobs of its name in calls of at most size, in claim order, each ending succeeded with its own output', async () => {
    const { store } = await target.open();
    const enqueued = await store.jobEnqueueMany({ jobs: Array.from({ length: 10 }, (_, i) => ({ name: 'index', payload: { i } })) });
    const recorder = recordingHandler(4, 10);
    const { worker } = node(store, { index: recorder.handler });
    await worker.start();
    await recorder.finished;
    await worker.stop();
    expect(recorder.calls.every((call) => call.length >= 1 && call.length <= 4)).toBe(true);
    expect(recorder.calls.flat()).toEqual(Array.from({ length: 10 }, (_, i) => i));
    // Ten jobs claimed together fill calls of four: fewer calls than jobs.
    expect(recorder.calls.length).toBeLessThanOrEqual(4);
    for (const [i, { id }] of enqueued.entries()) expect(await store.jobGet({ jobId: id })).toMatchObject({ state: 'succeeded', attempt: 1, output: { row: i } });
  });

  it('issue 39 item 6: a job the handler fails is retried alone, a permanent failure dead-letters it alone, the rest succeed', async () => {
    const { store } = await target.open();
    const payloads: Item[] = [{ i: 0 }, { i: 1, fail: 'retry' }, { i: 2 }, { i: 3, fail: 'permanent' }];
    const enqueued = await store.jobEnqueueMany({ jobs: payloads.map((payload) => ({ name: 'index', payload })) });
    const recorder = recordingHandler(10, 4);
    const { worker } = node(store, { index: recorder.handler });
    await worker.start();
    await recorder.finished;
    await worker.stop();
    expect(recorder.calls).toEqual([[0, 1, 2, 3]]);
    const [a, b, c, d] = await Promise.all(enqueued.map(({ id }) => store.jobGet({ jobId: id })));
    expect(a).toMatchObject({ state: 'succeeded', attempt: 1 });
    expect(b).toMatchObject({ state: 'scheduled', attempt: 1 });
    expect(b!.lastError).toContain('row 1 was refused');
    expect(c).toMatchObject({ state: 'succeeded', attempt: 1 });
    expect(d).toMatchObject({ state: 'dead_lettered', attempt: 1 });
    expect(d!.lastError).toContain('row 3 can never be written');
  });

  it('issue 39 item 6: a call that throws fails each of its jobs, each on its own retry schedule', async () => {
    const { store } = await target.open();
    const enqueued = await store.jobEnqueueMany({ jobs: [0, 1, 2].map((i) => ({ name: 'index', payload: { i } })) });
    const recorder = recordingHandler(10, 3, { throwOn: 1 });
    const { worker } = node(store, { index: recorder.handler });
    await worker.start();
    await recorder.finished;
    await worker.stop();
    for (const { id } of enqueued) {
      const job = await store.jobGet({ jobId: id });
      expect(job).toMatchObject({ state: 'scheduled', attempt: 1 });
      expect(job!.lastError).toContain('the bulk insert failed');
    }
  });

  it('issue 39 item 6: a payload the validator refuses is quarantined alone, before the call; the call takes the rest', async () => {
    const { store } = await target.open();
    const enqueued = await store.jobEnqueueMany({ jobs: [0, -1, 2].map((i) => ({ name: 'index', payload: { i } })) });
    const recorder = recordingHandler(10, 2);
    const { worker } = node(store, { index: { ...recorder.handler, validate: (payload) => (payload as Item).i >= 0 } });
    await worker.start();
    await recorder.finished;
    await worker.stop();
    expect(recorder.calls).toEqual([[0, 2]]);
    expect(await store.jobGet({ jobId: enqueued[1]!.id })).toMatchObject({ state: 'quarantined' });
    expect(await store.jobGet({ jobId: enqueued[2]!.id })).toMatchObject({ state: 'succeeded' });
  });

  it('issue 39 item 6: a job whose lease is lost during the call has its outcome refused, while the others of the call are applied', async () => {
    const { store } = await target.open();
    const enqueued = await store.jobEnqueueMany({ jobs: [0, 1, 2].map((i) => ({ name: 'index', payload: { i } })) });
    let inCall!: (jobs: readonly BatchJob<Item>[]) => void;
    const called = new Promise<readonly BatchJob<Item>[]>((resolve) => (inCall = resolve));
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let finished!: () => void;
    const ended = new Promise<void>((resolve) => (finished = resolve));
    const { worker } = node(store, {
      index: {
        batch: { size: 3 },
        handleBatch: async (jobs: readonly BatchJob<Item>[]) => {
          inCall(jobs);
          await released;
          finished();
        },
      } satisfies FunctionBatchHandler<Item>,
    });
    const settled: string[] = [];
    worker.events.on('settled', (event) => settled.push(`${event.jobId}:${event.status}`));
    await worker.start();
    const jobs = await called;
    expect(jobs.map((job) => job.payload.i)).toEqual([0, 1, 2]);
    // The interleaving: job 1's lease ends while the call runs (another node's takeover would do the
    // same), then the call returns and every job's success is reported.
    const handedBack = await store.jobRelinquishMany({ workerId: 'batch-1', leases: [{ jobId: enqueued[1]!.id, attempt: 1 }] });
    expect(handedBack[0]!.status).toBe('applied');
    release();
    await ended;
    await worker.stop();
    expect(await store.jobGet({ jobId: enqueued[0]!.id })).toMatchObject({ state: 'succeeded' });
    expect(await store.jobGet({ jobId: enqueued[2]!.id })).toMatchObject({ state: 'succeeded' });
    expect((await store.jobGet({ jobId: enqueued[1]!.id }))!.state).not.toBe('succeeded');
    expect(settled).toContain(`${enqueued[1]!.id}:stale`);
  });

  it('issue 39 item 6: attempt hooks wrap each job of a call as they would alone, and a job whose hook throws is left out of the call', async () => {
    const { store } = await target.open();
    const enqueued = await store.jobEnqueueMany({ jobs: [0, 1, 2].map((i) => ({ name: 'index', payload: { i } })) });
    const wrapped: string[] = [];
    const hook: AttemptHook = async (context, next) => {
      const { i } = context.payload as Item;
      if (i === 1) throw new Error('the hook refused job 1');
      wrapped.push(`before ${i}`);
      await next();
      wrapped.push(`after ${i}`);
    };
    const recorder = recordingHandler(10, 2);
    const { worker } = node(store, { index: recorder.handler }, {}, [hook]);
    await worker.start();
    await recorder.finished;
    await worker.stop();
    expect(recorder.calls).toEqual([[0, 2]]);
    expect(wrapped.filter((w) => w.startsWith('before')).sort()).toEqual(['before 0', 'before 2']);
    expect(wrapped.filter((w) => w.startsWith('after')).sort()).toEqual(['after 0', 'after 2']);
    expect(await store.jobGet({ jobId: enqueued[1]!.id })).toMatchObject({ state: 'scheduled' });
    expect(await store.jobGet({ jobId: enqueued[0]!.id })).toMatchObject({ state: 'succeeded' });
  });

  it('issue 39 item 6: a batch waits up to waitMs to fill, by the node clock, then starts with what it holds', async () => {
    const { store } = await target.open();
    await store.jobEnqueueMany({ jobs: [0, 1].map((i) => ({ name: 'index', payload: { i } })) });
    const recorder = recordingHandler(5, 2, { waitMs: 2_000 });
    const { worker, timers } = node(store, { index: recorder.handler });
    await worker.start();
    // The claim travels to the store and back in real time; the node's clock stands still.
    while (worker.stats.claimed < 2) await new Promise((resolve) => setImmediate(resolve));
    await settle(5);
    expect(recorder.calls).toEqual([]);
    await timers.advance(1_999);
    await settle(5);
    expect(recorder.calls).toEqual([]);
    await timers.advance(1);
    await recorder.finished;
    await worker.stop();
    expect(recorder.calls).toEqual([[0, 1]]);
  });

  it('issue 39 item 6: a call past its timeoutMs aborts its signal and fails every job of it; a cancel aborts only its own job', async () => {
    const { store } = await target.open();
    const enqueued = await store.jobEnqueueMany({ jobs: [0, 1].map((i) => ({ name: 'index', payload: { i } })) });
    let inCall!: (jobs: readonly BatchJob<Item>[]) => void;
    const called = new Promise<readonly BatchJob<Item>[]>((resolve) => (inCall = resolve));
    const reasons: unknown[] = [];
    const { worker, timers } = node(store, {
      index: {
        batch: { size: 2 },
        timeoutMs: 20_000,
        handleBatch: (jobs: readonly BatchJob<Item>[], context) =>
          new Promise<void>((resolve) => {
            inCall(jobs);
            context.signal.addEventListener('abort', () => {
              reasons.push(context.signal.reason);
              resolve();
            });
          }),
      } satisfies FunctionBatchHandler<Item>,
    });
    await worker.start();
    const jobs = await called;
    // One job's cancel reaches its own signal, not the call's.
    const cancelled = await store.jobCancel({ jobId: enqueued[0]!.id });
    expect(cancelled.outcome).toBe('cancel_requested');
    // The next heartbeat carries the request back; it travels in real time.
    await timers.advance(10_000);
    while (!jobs[0]!.signal.aborted) await new Promise((resolve) => setImmediate(resolve));
    expect(jobs[0]!.signal.reason).toBe('cancel_requested');
    expect(jobs[1]!.signal.aborted).toBe(false);
    expect(reasons).toEqual([]);
    await timers.advance(10_000);
    await worker.stop();
    expect(reasons).toHaveLength(1);
    expect((reasons[0] as Error).message).toBe('timed out after 20000 ms');
    expect(await store.jobGet({ jobId: enqueued[0]!.id })).toMatchObject({ state: 'cancelled' });
    expect(await store.jobGet({ jobId: enqueued[1]!.id })).toMatchObject({ state: 'scheduled' });
    expect((await store.jobGet({ jobId: enqueued[1]!.id }))!.lastError).toContain('timed out after 20000 ms');
  });

  it('issue 39 item 6: timeoutMs bounds the hooks too: a hook that waits on another job of the call (a lock of one) fails the call by its timeout instead of holding its slot', async () => {
    const { store } = await target.open();
    const enqueued = await store.jobEnqueueMany({ jobs: [0, 1].map((i) => ({ name: 'index', payload: { i } })) });
    // A lock of one, held across next(): the second job's hook waits for the first job's, which
    // waits for the call, which waits for the second job's hook.
    let locked: Promise<void> | undefined;
    const hook: AttemptHook = async (_context, next) => {
      while (locked) await locked;
      let unlock!: () => void;
      locked = new Promise<void>((resolve) => (unlock = resolve));
      try {
        await next();
      } finally {
        locked = undefined;
        unlock();
      }
    };
    const calls: number[] = [];
    const { worker, timers } = node(store, { index: { batch: { size: 2 }, timeoutMs: 5_000, handleBatch: (jobs: readonly BatchJob<Item>[]) => void calls.push(jobs.length) } satisfies FunctionBatchHandler<Item> }, {}, [hook]);
    await worker.start();
    while (worker.stats.claimed < 2) await new Promise((resolve) => setImmediate(resolve));
    await settle(5);
    expect(calls).toEqual([]);
    await timers.advance(5_000);
    await worker.stop();
    for (const { id } of enqueued) {
      const job = await store.jobGet({ jobId: id });
      expect(job).toMatchObject({ state: 'scheduled', attempt: 1 });
      expect(job!.lastError).toContain('timed out after 5000 ms');
    }
  });

  it('issue 39 item 6: an invoker whose invokeBatch throws before returning a promise fails every job of the call, and the node goes on', async () => {
    const { store } = await target.open();
    const enqueued = await store.jobEnqueueMany({ jobs: [0, 1, 2].map((i) => ({ name: 'index', payload: { i } })) });
    const invoker = new FunctionInvoker({ index: { batch: { size: 3 }, handleBatch: () => undefined } });
    invoker.invokeBatch = () => {
      throw new Error('the invoker could not resolve the handler');
    };
    const timers = new ManualTimers();
    const worker = new WorkerNode({ store, invoker, options: { scheduling: false, pollIntervalMs: 3_600_000, leaseMs: 60_000, workerId: 'batch-1' }, clock: timers.clock, timers, random: new SeededRandom(7n) });
    let settledCount = 0;
    worker.events.on('settled', () => (settledCount += 1));
    await worker.start();
    while (settledCount < 3) await new Promise((resolve) => setImmediate(resolve));
    await worker.stop();
    for (const { id } of enqueued) expect((await store.jobGet({ jobId: id }))!.lastError).toContain('the invoker could not resolve the handler');
  });

  it("issue 39 item 6: the call's signal aborts once every job the call took is aborted, a job quarantined before it does not count", async () => {
    const { store } = await target.open();
    const enqueued = await store.jobEnqueueMany({ jobs: [0, -1, 2].map((i) => ({ name: 'index', payload: { i } })) });
    let inCall!: (signal: AbortSignal) => void;
    const called = new Promise<AbortSignal>((resolve) => (inCall = resolve));
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const { worker, timers } = node(store, {
      index: {
        batch: { size: 3 },
        validate: (payload) => (payload as Item).i >= 0,
        handleBatch: async (_jobs: readonly BatchJob<Item>[], context) => {
          inCall(context.signal);
          await released;
        },
      } satisfies FunctionBatchHandler<Item>,
    });
    await worker.start();
    const signal = await called;
    for (const id of [enqueued[0]!.id, enqueued[2]!.id]) await store.jobCancel({ jobId: id });
    await timers.advance(10_000);
    while (!signal.aborted) await new Promise((resolve) => setImmediate(resolve));
    expect(signal.reason).toBe('cancel_requested');
    release();
    await worker.stop();
    expect(await store.jobGet({ jobId: enqueued[1]!.id })).toMatchObject({ state: 'quarantined' });
  });
}
