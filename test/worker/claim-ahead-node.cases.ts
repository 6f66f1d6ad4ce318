import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { SeededRandom } from '../../lib/core/index.js';
import type { ConformanceTarget } from '../../lib/store-kit/conformance/index.js';
import type { JobStore } from '../../lib/store/index.js';
import { FunctionInvoker, WorkerNode, type FunctionHandler, type WorkerOptions } from '../../lib/worker/index.js';
import { ManualTimers, settle } from '../support/manual-timers.js';

/**
 * Issue 36 item 3 on a SQL store: a node with a local queue claims more than its free slots once
 * its handlers are known to be quick, and still never runs more than its concurrency at once. The
 * node runs on manual timers (its handlers take no time by its clock); the store on its own.
 */
export function runClaimAheadNodeCases(makeTarget: () => Promise<ConformanceTarget>): void {
  let target: ConformanceTarget;
  beforeAll(async () => {
    target = await makeTarget();
  });
  afterAll(async () => {
    await target.teardown();
  });

  /** A store whose claims are recorded: what each asked for and what came back. */
  function recorded(store: JobStore) {
    const claims: { limit: number; got: number }[] = [];
    const claim = store.jobClaim.bind(store);
    store.jobClaim = async (params) => {
      const jobs = await claim(params);
      claims.push({ limit: params.limit, got: jobs.length });
      return jobs;
    };
    // A claim that carries outcomes travels as one call with them.
    const both = store.jobCompleteAndClaim!.bind(store);
    store.jobCompleteAndClaim = async (params) => {
      const result = await both(params);
      claims.push({ limit: params.claim.limit, got: result.jobs.length });
      return result;
    };
    return claims;
  }

  function node(store: JobStore, handlers: Record<string, FunctionHandler<never>>, options: WorkerOptions) {
    const timers = new ManualTimers();
    const worker = new WorkerNode({
      store,
      invoker: new FunctionInvoker(handlers),
      options: { scheduling: false, pollIntervalMs: 3_600_000, heartbeatIntervalMs: 10_000, leaseMs: 60_000, workerId: 'ahead-1', ...options },
      clock: timers.clock,
      timers,
      random: new SeededRandom(7n),
    });
    return { timers, worker };
  }

  /**
   * A handler that takes no time by the node's clock (it yields once), counting how many run at
   * once; `finished` resolves when `jobs` runs have ended.
   */
  function quickHandler(jobs: number, onRun: (payload: { i: number }) => void = () => {}) {
    let running = 0;
    let most = 0;
    let handled = 0;
    let done!: () => void;
    const finished = new Promise<void>((resolve) => (done = resolve));
    const handler = {
      handle: async (payload: { i: number }) => {
        running += 1;
        most = Math.max(most, running);
        onRun(payload);
        await settle(1);
        running -= 1;
        if (++handled === jobs) done();
      },
    };
    return { handler, finished, most: () => most };
  }

  it('issue 36 item 3: claims ahead of its free slots once handlers are quick, runs them in claim order, never more than its concurrency at once', async () => {
    const { store } = await target.open();
    const claims = recorded(store);
    const jobs = 60;
    const enqueued = await store.jobEnqueueMany({ jobs: Array.from({ length: jobs }, (_, i) => ({ name: 'quick', payload: { i } })) });
    const order: number[] = [];
    const quick = quickHandler(jobs, (payload) => order.push(payload.i));
    const { worker } = node(store, { quick: quick.handler }, { concurrency: 2, claimBatchSize: 100, claimAhead: 8 });
    await worker.start();
    await quick.finished;
    await worker.stop();
    expect(quick.most()).toBe(2);
    // The first claim knows nothing of the handlers' time and takes the free slots only; later
    // ones take the slots and the local queue.
    expect(claims[0]).toEqual({ limit: 2, got: 2 });
    expect(Math.max(...claims.map((c) => c.got))).toBeGreaterThan(2);
    expect(Math.max(...claims.map((c) => c.limit))).toBeLessThanOrEqual(2 + 8);
    // One enqueue order, one priority: the local queue starts them in claim order.
    expect(order).toEqual(Array.from({ length: jobs }, (_, i) => i));
    for (const { id } of enqueued) expect(await store.jobGet({ jobId: id })).toMatchObject({ state: 'succeeded', attempt: 1 });
  });

  it('issue 36 item 3: at the defaults, quick handlers at concurrency 10 are claimed 200 at a time, beyond their free slots', async () => {
    const { store } = await target.open();
    const claims = recorded(store);
    const jobs = 700;
    await store.jobEnqueueMany({ jobs: Array.from({ length: jobs }, (_, i) => ({ name: 'quick', payload: { i } })) });
    const quick = quickHandler(jobs);
    const { worker } = node(store, { quick: quick.handler }, { concurrency: 10 });
    await worker.start();
    await quick.finished;
    await worker.stop();
    expect(quick.most()).toBeLessThanOrEqual(10);
    // claimBatchSize defaults to 200 and the local queue to 500: with room for 510, a claim asks
    // for a whole batch, never more, and one claim fills it.
    expect(Math.max(...claims.map((c) => c.limit))).toBe(200);
    expect(claims.some((c) => c.got === 200)).toBe(true);
    expect(await store.jobList({ state: 'succeeded', limit: 1_000 })).toHaveLength(jobs);
  });

  it('issue 36 item 3: claims no further than its free slots while handlers are slow', async () => {
    const { store } = await target.open();
    const claims = recorded(store);
    const jobs = 12;
    await store.jobEnqueueMany({ jobs: Array.from({ length: jobs }, (_, i) => ({ name: 'slow', payload: { i } })) });
    const gates: Array<() => void> = [];
    let started = 0;
    let startedSignal: () => void = () => {};
    const { timers, worker } = node(
      store,
      {
        slow: {
          handle: () =>
            new Promise<void>((resolve) => {
              started += 1;
              gates.push(resolve);
              startedSignal();
            }),
        },
      },
      { concurrency: 2, claimBatchSize: 100, claimAhead: 8, claimAheadMs: 100 },
    );
    const waitStarted = (n: number) =>
      new Promise<void>((resolve) => {
        startedSignal = () => started >= n && resolve();
        startedSignal();
      });
    await worker.start();
    for (let n = 2; n <= jobs; n += 2) {
      await waitStarted(n);
      // Each pair of handlers takes a full second by the node's clock: 2 slots × 100 ms / 1 s < 1 ahead.
      await timers.advance(1_000);
      for (const release of gates.splice(0)) release();
    }
    await worker.stop();
    expect(started).toBe(jobs);
    expect(claims.every((c) => c.limit <= 2)).toBe(true);
  });

  it('a job whose lease lapsed while its handler ran, claimed again by the same node: the first attempt is aborted, and the second starts only once the first has ended', async () => {
    const opened = await target.open();
    const { store } = opened;
    const [first, second] = await store.jobEnqueueMany({ jobs: [{ name: 'gated', payload: { i: 0 } }, { name: 'gated', payload: { i: 1 } }] });
    const gates = new Map<string, () => void>();
    const runs: { id: string; attempt: number; aborted?: string }[] = [];
    let live = 0;
    let mostLive = 0;
    let startedSignal: () => void = () => {};
    const { worker } = node(
      store,
      {
        gated: {
          handle: (_payload, ctx) =>
            new Promise<void>((resolve) => {
              const run: { id: string; attempt: number; aborted?: string } = { id: ctx.jobId, attempt: ctx.attempt };
              runs.push(run);
              live += 1;
              mostLive = Math.max(mostLive, live);
              ctx.signal.addEventListener('abort', () => (run.aborted = String(ctx.signal.reason)));
              gates.set(`${ctx.jobId}:${ctx.attempt}`, () => {
                live -= 1;
                resolve();
              });
              startedSignal();
            }),
        },
      },
      // Room to claim ahead from the start: the node takes the job back while its first attempt runs.
      { concurrency: 1, claimBatchSize: 10, claimAhead: 10, claimAheadMs: 3_600_000 },
    );
    const waitFor = (check: () => boolean) =>
      new Promise<void>((resolve) => {
        startedSignal = () => check() && resolve();
        startedSignal();
      });
    const leaseLost = new Promise<{ jobId: string; attempt: number }>((resolve) => worker.events.once('leaseLost', resolve));
    await worker.start();
    await waitFor(() => runs.length === 1);
    expect(runs[0]).toMatchObject({ id: first!.id, attempt: 1 });
    // The first job settles once, so the node knows its handlers' time and claims ahead; then the
    // second job's lease lapses in the store while its handler still runs here.
    const firstRecorded = worker.settledOnce(first!.id, (event) => event.attempt === 1);
    gates.get(`${first!.id}:1`)!();
    await waitFor(() => runs.length === 2);
    // Its outcome may go in a write of its own beside the claim that took the second job: it is
    // recorded before the store's clock moves past its lease.
    expect(await firstRecorded).toMatchObject({ attempt: 1, status: 'applied', state: 'succeeded' });
    expect(runs[1]).toMatchObject({ id: second!.id, attempt: 1 });
    await opened.advance(61_000);
    worker.poll();
    expect(await leaseLost).toEqual({ jobId: second!.id, attempt: 1, reason: 'lease_lost' });
    expect(runs[1]!.aborted).toBe('lease_lost');
    expect(await store.jobGet({ jobId: second!.id })).toMatchObject({ state: 'running', attempt: 2, workerId: 'ahead-1' });
    // Attempt 2 is held in the local queue, not started: attempt 1's code still runs.
    await settle(20);
    expect(runs).toHaveLength(2);
    const settledFirst = worker.settledOnce(second!.id, (event) => event.attempt === 1);
    gates.get(`${second!.id}:1`)!();
    expect(await settledFirst).toMatchObject({ attempt: 1, status: 'dropped' });
    await waitFor(() => runs.length === 3);
    expect(runs[2]).toMatchObject({ id: second!.id, attempt: 2 });
    const settledSecond = worker.settledOnce(second!.id, (event) => event.attempt === 2);
    gates.get(`${second!.id}:2`)!();
    expect(await settledSecond).toMatchObject({ attempt: 2, status: 'applied', state: 'succeeded' });
    await worker.stop();
    expect(mostLive).toBe(1);
    expect(await store.jobGet({ jobId: second!.id })).toMatchObject({ state: 'succeeded', attempt: 2 });
  });
}
