import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { DataSource } from 'typeorm';
import { JobFailedError, JobWaiterClosedError } from '../../lib/core/index.js';
import { PostgresJobStore } from '../../lib/store/index.js';
import { FunctionInvoker, JobWaiter, storeFinishHints, WorkerNode, type Timers } from '../../lib/worker/index.js';
import { ManualTimers } from '../support/manual-timers.js';
import { dropSchemas, openPostgresDataSource, uniqueSchema } from '../support/postgres.js';

// Each side has a DataSource (a pool) of its own, as two processes would: the waiter's app reads
// through one, the workers write through the other.
let waiterSide: DataSource;
let workerSide: DataSource;
const schema = uniqueSchema('wait');
const stores: PostgresJobStore[] = [];

beforeAll(async () => {
  waiterSide = await openPostgresDataSource(4);
  workerSide = await openPostgresDataSource(4);
});
afterAll(async () => {
  await Promise.all(stores.map((store) => store.close()));
  await dropSchemas(waiterSide, [schema]);
  await Promise.all([waiterSide.destroy(), workerSide.destroy()]);
});

function storeOn(dataSource: DataSource): PostgresJobStore {
  const store = new PostgresJobStore({ dataSource, schema });
  stores.push(store);
  return store;
}

/** Poll timers that never fire: the test reads with `pollOnce`, or waits for a local hint. */
const heldTimers: Timers = { setTimeout: () => 0, clearTimeout: () => undefined, defer: (callback) => void Promise.resolve().then(callback) };

describe('waitFor across processes on PostgreSQL', () => {
  let waiterStore: PostgresJobStore;
  let workerStore: PostgresJobStore;
  beforeAll(async () => {
    waiterStore = storeOn(waiterSide);
    workerStore = storeOn(workerSide);
    await workerStore.migrate();
  });

  it('sees a success a worker on another pool recorded, with its output', async () => {
    const waiter = new JobWaiter({ store: waiterStore, timers: heldTimers });
    const { id } = await waiterStore.jobEnqueue({ job: { name: 'sum', payload: [1, 2], queue: 'remote' } });
    const result = waiter.waitFor(id, { timeoutMs: 60_000 });
    await waiter.pollOnce();
    const [job] = await workerStore.jobClaim({ workerId: 'remote-1', limit: 1, queues: ['remote'], leaseMs: 30_000 });
    await workerStore.jobCompleteMany({ workerId: 'remote-1', outcomes: [{ jobId: job!.id, attempt: 1, kind: 'succeeded', output: { sum: 3 } }] });
    await waiter.pollOnce();
    await expect(result).resolves.toMatchObject({ jobId: id, state: 'succeeded', output: { sum: 3 }, attempt: 1 });
    expect(waiter.pending).toBe(0);
  });

  it('survives a worker killed mid-attempt: a worker node elsewhere retries the job after the lease lapses, and its outcome ends the wait', async () => {
    const waiter = new JobWaiter({ store: waiterStore, timers: heldTimers });
    const { id } = await waiterStore.jobEnqueue({ job: { name: 'flaky', payload: 1, queue: 'killed', maxAttempts: 3 } });
    const waited = waiter.waitFor(id);
    // The first worker claims and dies: it never reports, and its lease is left to lapse.
    await workerStore.jobClaim({ workerId: 'dead-worker', limit: 1, queues: ['killed'], leaseMs: 30_000 });
    await waiter.pollOnce();
    await workerSide.query(`UPDATE ${workerStore.naming.jobs} SET leased_until = now() - interval '1 second' WHERE id = $1`, [id]);
    // The dead worker's late report is refused by the fence; the wait goes on.
    const [late] = await workerStore.jobCompleteMany({ workerId: 'dead-worker', outcomes: [{ jobId: id, attempt: 1, kind: 'succeeded', output: 'dead' }] });
    expect(late).toMatchObject({ status: 'stale' });
    await waiter.pollOnce();
    expect(waiter.pending).toBe(1);
    const node = new WorkerNode({
      store: workerStore,
      invoker: new FunctionInvoker({ flaky: { handle: (_payload, ctx) => ctx.setOutput({ attempt: ctx.attempt }) } }),
      options: { queues: ['killed'], concurrency: 1, workerId: 'rescuer', shutdownGraceMs: 1_000 },
    });
    await node.start();
    try {
      const settled = await node.settledOnce(id, (event) => event.status === 'applied');
      expect(settled.state).toBe('succeeded');
    } finally {
      await node.stop();
    }
    await waiter.pollOnce();
    await expect(waited).resolves.toMatchObject({ jobId: id, output: { attempt: 2 }, attempt: 2 });
  });

  it('rejects with the last error a remote worker recorded when the job is dead-lettered', async () => {
    const waiter = new JobWaiter({ store: waiterStore, timers: heldTimers });
    const { id } = await waiterStore.jobEnqueue({ job: { name: 'doomed', payload: 1, queue: 'doomed', maxAttempts: 1 } });
    const waited = waiter.waitFor(id);
    await workerStore.jobClaim({ workerId: 'remote-2', limit: 1, queues: ['doomed'], leaseMs: 30_000 });
    await workerStore.jobCompleteMany({ workerId: 'remote-2', outcomes: [{ jobId: id, attempt: 1, kind: 'failed', error: 'gateway refused', retryDelayMs: 0 }] });
    await waiter.pollOnce();
    await expect(waited).rejects.toThrow(JobFailedError);
    await expect(waited).rejects.toMatchObject({ state: 'dead_lettered', lastError: 'gateway refused' });
  });

  it('wakes on the NOTIFY of the statement that finished the job, with no poll due, and reads once LISTEN is on so nothing before it is missed', async () => {
    // Manual timers nobody advances once the job runs: no poll can end this wait, only the hint.
    const timers = new ManualTimers();
    const reads: string[][] = [];
    const readAt = new Map<number, () => void>();
    const nthRead = (n: number) => new Promise<void>((resolve) => (reads.length >= n ? resolve() : readAt.set(n, resolve)));
    const counted = {
      jobStatusMany: async (params: { jobIds: readonly string[] }) => {
        reads.push([...params.jobIds]);
        readAt.get(reads.length)?.();
        return waiterStore.jobStatusMany(params);
      },
    };
    const waiter = new JobWaiter({ store: counted, timers, hints: storeFinishHints(waiterStore), minPollMs: 100, maxPollMs: 3_600_000 });
    const { id } = await waiterStore.jobEnqueue({ job: { name: 'hinted', payload: 1, queue: 'hinted' } });
    const result = waiter.waitFor(id);
    // The first read, and the one the subscription asks for once its LISTEN is in place.
    await nthRead(2);
    // Lets the hint's cooldown pass (the poll due then reads the job still queued).
    await timers.advance(100);
    const before = reads.length;
    const [job] = await workerStore.jobClaim({ workerId: 'remote-3', limit: 1, queues: ['hinted'], leaseMs: 30_000 });
    await workerStore.jobCompleteMany({ workerId: 'remote-3', outcomes: [{ jobId: job!.id, attempt: 1, kind: 'succeeded', output: 'hinted' }] });
    await expect(result).resolves.toMatchObject({ jobId: id, state: 'succeeded', output: 'hinted' });
    expect(reads.length).toBe(before + 1);
    waiter.close();
  });

  it('leaves nothing waiting for the LISTEN connection when a finish subscription closes before it came', async () => {
    const fresh = storeOn(waiterSide);
    const waiters = () => (fresh.wakeListener as unknown as { connectedWaiters: unknown[] }).connectedWaiters.length;
    let heard = 0;
    const subscription = await fresh.subscribeFinishHints({ listener: () => (heard += 1) });
    expect(fresh.wakeListener.pid).toBeUndefined();
    expect(waiters()).toBe(1);
    await subscription.close();
    expect(waiters()).toBe(0);
    // Opened again and left open: the connection's arrival is the one hint, then nothing is left waiting.
    const again = await fresh.subscribeFinishHints({ listener: () => (heard += 1) });
    await fresh.wakeListener.nextConnection();
    expect(heard).toBe(1);
    expect(waiters()).toBe(0);
    await again.close();
  });

  it('reads 2,500 waited-on jobs in three statements per poll, through the pool it already has', async () => {
    const jobs = Array.from({ length: 2_500 }, (_, n) => ({ name: 'bulk', payload: n, queue: 'bulk', delayMs: 3_600_000 }));
    const ids: string[] = [];
    for (let from = 0; from < jobs.length; from += 500) ids.push(...(await waiterStore.jobEnqueueMany({ jobs: jobs.slice(from, from + 500) })).map((r) => r.id));
    const reads: number[] = [];
    const counted = new Proxy(waiterStore, {
      get: (target, prop, receiver) => {
        if (prop !== 'jobStatusMany') return Reflect.get(target, prop, receiver) as unknown;
        return (params: { jobIds: readonly string[] }) => {
          reads.push(params.jobIds.length);
          return target.jobStatusMany(params);
        };
      },
    });
    const waiter = new JobWaiter({ store: counted, timers: heldTimers });
    const waits = ids.map((id) => waiter.waitFor(id).catch((error: unknown) => error));
    await waiter.pollOnce();
    expect(reads).toEqual([1000, 1000, 500]);
    expect(waiter.pending).toBe(2_500);
    waiter.close();
    expect((await Promise.all(waits)).every((error) => error instanceof JobWaiterClosedError)).toBe(true);
  });
});
