import { afterEach, describe, expect, it } from '@jest/globals';
import { SeededRandom } from '../../lib/core/index.js';
import { MemoryJobStore, type JobStore } from '../../lib/store/index.js';
import { FunctionInvoker, PermanentJobError, WorkerNode, type FunctionHandler, type WorkerOptions } from '../../lib/worker/index.js';
import { ManualTimers, settle } from '../support/manual-timers.js';

const nodes: WorkerNode[] = [];
afterEach(async () => {
  for (const node of nodes.splice(0)) if (node.status !== 'stopped') void node.stop();
});

function setup(handlers: Record<string, FunctionHandler<never>>, options: WorkerOptions = {}, storeOverride?: (store: MemoryJobStore) => JobStore) {
  const timers = new ManualTimers();
  const memory = new MemoryJobStore({ clock: timers.clock });
  const store = storeOverride ? storeOverride(memory) : memory;
  const node = new WorkerNode({
    store,
    invoker: new FunctionInvoker(handlers),
    options: { concurrency: 4, pollIntervalMs: 1_000, heartbeatIntervalMs: 10_000, leaseMs: 30_000, workerId: 'node-1', ...options },
    clock: timers.clock,
    timers,
    random: new SeededRandom(1n),
  });
  nodes.push(node);
  return { timers, memory, node };
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

describe('WorkerNode on the in-memory store', () => {
  it('runs a job and records its output through the fenced write', async () => {
    const seen: unknown[] = [];
    const { memory, node } = setup({
      greet: {
        handle: (payload: { who: string }, ctx) => {
          seen.push({ payload, attempt: ctx.attempt, occurrenceId: ctx.occurrenceId });
          ctx.setOutput({ greeted: payload.who });
        },
      },
    });
    const { id } = await memory.jobEnqueue({ job: { name: 'greet', payload: { who: 'ada' } } });
    await node.start();
    await settle();
    const job = await memory.jobGet({ jobId: id });
    expect(job).toMatchObject({ state: 'succeeded', output: { greeted: 'ada' }, attempt: 1, workerId: 'node-1' });
    expect(seen).toEqual([{ payload: { who: 'ada' }, attempt: 1, occurrenceId: job!.occurrenceId }]);
    expect(node.stats).toMatchObject({ claimed: 1, succeeded: 1, staleOutcomes: 0 });
  });

  it('retries a failing job after the policy delay and succeeds on the third attempt', async () => {
    let calls = 0;
    const { timers, memory, node } = setup({
      flaky: {
        retry: { baseDelayMs: 1_000, maxDelayMs: 10_000, jitter: false },
        handle: () => {
          calls += 1;
          if (calls < 3) throw new Error(`flaky ${calls}`);
        },
      },
    });
    const { id } = await memory.jobEnqueue({ job: { name: 'flaky', payload: null, maxAttempts: 5 } });
    await node.start();
    await settle();
    expect(await memory.jobGet({ jobId: id })).toMatchObject({ state: 'scheduled', attempt: 1, lastError: expect.stringMatching(/^Error: flaky 1/) });
    await timers.advance(1_999);
    expect(calls).toBe(1); // the retry waits the full 2 s (base doubled once)
    await timers.advance(1_000);
    expect(calls).toBe(2);
    await timers.advance(5_000);
    expect(calls).toBe(3);
    expect(await memory.jobGet({ jobId: id })).toMatchObject({ state: 'succeeded', attempt: 3 });
    expect(node.stats).toMatchObject({ failed: 2, succeeded: 1 });
  });

  it('dead-letters at once on PermanentJobError, and when attempts run out', async () => {
    const { memory, node } = setup({
      declined: { handle: () => Promise.reject(new PermanentJobError('card declined')) },
      broken: { handle: () => Promise.reject(new Error('always')) },
    });
    const declined = await memory.jobEnqueue({ job: { name: 'declined', payload: 1, maxAttempts: 5 } });
    const broken = await memory.jobEnqueue({ job: { name: 'broken', payload: 1, maxAttempts: 1 } });
    await node.start();
    await settle();
    expect(await memory.jobGet({ jobId: declined.id })).toMatchObject({ state: 'dead_lettered', attempt: 1, lastError: expect.stringContaining('card declined') });
    expect(await memory.jobGet({ jobId: broken.id })).toMatchObject({ state: 'dead_lettered', attempt: 1 });
  });

  it('issue 39 item 5: a snooze after a cancel request ends the job cancelled, the budget untouched', async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const { timers, memory, node } = setup({
      polling: {
        handle: async (_payload, ctx) => {
          await released;
          return ctx.snooze(60_000);
        },
      },
    });
    const { id } = await memory.jobEnqueue({ job: { name: 'polling', payload: 1, maxAttempts: 2 } });
    await node.start();
    await settle();
    await memory.jobCancel({ jobId: id });
    await timers.advance(10_000); // the heartbeat hears the request
    release();
    await settle();
    expect(await memory.jobGet({ jobId: id })).toMatchObject({ state: 'cancelled', attempt: 1, maxAttempts: 2, snoozes: 0 });
    expect(node.stats).toMatchObject({ snoozed: 0, cancelled: 1 });
  });

  it('issue 39 item 5: wakes itself when a snooze shorter than the poll interval ends, not at the next poll', async () => {
    const runs: number[] = [];
    const { timers, memory, node } = setup({
      polling: { handle: (_payload, ctx) => (runs.push(timers.clock.now()), ctx.snoozes < 2 ? ctx.snooze(ctx.snoozes === 0 ? 200 : 1_500) : undefined) },
    });
    const { id } = await memory.jobEnqueue({ job: { name: 'polling', payload: 1 } });
    const start = timers.clock.now();
    await node.start();
    await settle();
    await timers.advance(200);
    // Due again after 200 ms, and run then: the poll (every 1,000 ms) is still 800 ms away.
    expect(runs.map((at) => at - start)).toEqual([0, 200]);
    // A snooze as long as the poll interval or longer waits for a poll.
    await timers.advance(1_500);
    expect(runs).toHaveLength(2);
    await timers.advance(300);
    expect(runs.map((at) => at - start)).toEqual([0, 200, 2_000]);
    expect(await memory.jobGet({ jobId: id })).toMatchObject({ state: 'succeeded', attempt: 3, snoozes: 2 });
  });

  it('quarantines a job with no handler on this node, without charging more attempts', async () => {
    const { memory, node } = setup({});
    const { id } = await memory.jobEnqueue({ job: { name: 'unknown.job', payload: 1 } });
    await node.start();
    await settle();
    expect(await memory.jobGet({ jobId: id })).toMatchObject({ state: 'quarantined', attempt: 1, lastError: 'no handler for "unknown.job" on this node' });
    expect(node.stats.quarantined).toBe(1);
  });

  it('fails an attempt that outlives its timeout and aborts its signal', async () => {
    const b = blocking();
    const { timers, memory, node } = setup({ slow: { ...b.handler, timeoutMs: 5_000, retry: { jitter: false } } });
    const { id } = await memory.jobEnqueue({ job: { name: 'slow', payload: 1, maxAttempts: 2 } });
    await node.start();
    await timers.advance(5_000);
    expect(b.signals[0]!.aborted).toBe(true);
    expect(String(b.signals[0]!.reason)).toMatch(/timed out after 5000 ms/);
    expect(await memory.jobGet({ jobId: id })).toMatchObject({ state: 'scheduled', attempt: 1, lastError: expect.stringMatching(/timed out after 5000 ms/) });
    b.release();
  });

  it('keeps a long attempt leased with heartbeats', async () => {
    const b = blocking();
    const { timers, memory, node } = setup({ long: b.handler });
    const { id } = await memory.jobEnqueue({ job: { name: 'long', payload: 1 } });
    await node.start();
    await timers.advance(95_000); // three leases long
    expect(await memory.jobGet({ jobId: id })).toMatchObject({ state: 'running', attempt: 1 });
    expect(b.signals[0]!.aborted).toBe(false);
    b.release();
    await settle();
    expect(await memory.jobGet({ jobId: id })).toMatchObject({ state: 'succeeded', attempt: 1 });
  });

  it('aborts an attempt whose lease was lost and does not report its outcome', async () => {
    const b = blocking();
    let cutOff = false;
    const { timers, memory, node } = setup({ isolated: b.handler }, { concurrency: 1 }, (store) =>
      new Proxy(store, {
        get(target, prop, receiver) {
          if (prop === 'jobHeartbeat') {
            return (...args: Parameters<JobStore['jobHeartbeat']>) => (cutOff ? Promise.reject(new Error('network down')) : target.jobHeartbeat(...args));
          }
          const value = Reflect.get(target, prop, receiver);
          return typeof value === 'function' ? value.bind(target) : value;
        },
      }),
    );
    const { id } = await memory.jobEnqueue({ job: { name: 'isolated', payload: 1 } });
    await node.start();
    await settle();
    cutOff = true;
    await timers.advance(30_000);
    expect(b.signals[0]!.aborted).toBe(true);
    expect(b.signals[0]!.reason).toBe('lease_expired');
    // Another worker takes the job over; the isolated one then finishes and must not report.
    const [taken] = await memory.jobClaim({ workerId: 'node-2', limit: 1, queues: ['default'], leaseMs: 30_000 });
    expect(taken).toMatchObject({ id, attempt: 2 });
    b.release();
    await settle();
    expect(node.stats).toMatchObject({ leasesLost: 1, forfeitedOutcomes: 1, succeeded: 0 });
    expect(await memory.jobGet({ jobId: id })).toMatchObject({ state: 'running', attempt: 2, workerId: 'node-2' });
  });

  it('aborts on an operator cancel and records the job cancelled', async () => {
    const { timers, memory, node } = setup({
      cancellable: {
        handle: (_payload, ctx) =>
          new Promise<void>((_resolve, reject) => ctx.signal.addEventListener('abort', () => reject(new Error(`aborted: ${String(ctx.signal.reason)}`)))),
      },
    });
    const { id } = await memory.jobEnqueue({ job: { name: 'cancellable', payload: 1 } });
    await node.start();
    await settle();
    expect((await memory.jobCancel({ jobId: id })).outcome).toBe('cancel_requested');
    await timers.advance(10_000);
    expect(await memory.jobGet({ jobId: id })).toMatchObject({ state: 'cancelled', lastError: expect.stringContaining('aborted: cancel_requested') });
  });

  it('logs an attempt an operator cancelled as stopped, not as a failure that retries', async () => {
    const lines: string[] = [];
    const logger = { log: (m: string) => lines.push(`log ${m}`), warn: (m: string) => lines.push(`warn ${m}`), error: (m: string) => lines.push(`error ${m}`) };
    const timers = new ManualTimers();
    const memory = new MemoryJobStore({ clock: timers.clock });
    const handlers = {
      cancellable: {
        handle: (_payload: never, ctx: { signal: AbortSignal }) => new Promise<void>((_resolve, reject) => ctx.signal.addEventListener('abort', () => reject(new Error('aborted')))),
      },
    };
    const node = new WorkerNode({
      store: memory,
      invoker: new FunctionInvoker(handlers),
      options: { concurrency: 4, pollIntervalMs: 1_000, heartbeatIntervalMs: 10_000, leaseMs: 30_000, workerId: 'node-1' },
      clock: timers.clock,
      timers,
      random: new SeededRandom(1n),
      logger,
    });
    nodes.push(node);
    const { id } = await memory.jobEnqueue({ job: { name: 'cancellable', payload: 1, maxAttempts: 5 } });
    await node.start();
    await settle();
    await memory.jobCancel({ jobId: id });
    await timers.advance(10_000);
    expect((await memory.jobGet({ jobId: id }))!.state).toBe('cancelled');
    expect(lines.filter((line) => line.includes(id))).toEqual([`log cancellable ${id} attempt 1 stopped: an operator cancelled the job, which ends cancelled.`]);
  });

  it('on shutdown waits for running attempts, then hands back what outlives the grace period', async () => {
    const b = blocking();
    const quick = { handle: async () => {} };
    const { timers, memory, node } = setup({ stuck: b.handler, quick }, { shutdownGraceMs: 5_000 });
    const stuck = await memory.jobEnqueue({ job: { name: 'stuck', payload: 1, maxAttempts: 3 } });
    await node.start();
    await settle();
    let stopped = false;
    const stopping = node.stop().then(() => (stopped = true));
    const late = await memory.jobEnqueue({ job: { name: 'quick', payload: 1 } });
    await timers.advance(4_999);
    expect(stopped).toBe(false);
    await timers.advance(1);
    await stopping;
    expect(b.signals[0]!.reason).toBe('shutdown');
    const job = await memory.jobGet({ jobId: stuck.id });
    expect(job).toMatchObject({ state: 'scheduled', attempt: 1, workerId: null });
    expect(job!.runAt.getTime()).toBe(timers.clock.now());
    expect((await memory.jobGet({ jobId: late.id }))?.state).toBe('scheduled'); // not claimed while draining
    expect(node.stats.relinquished).toBe(1);
    b.release();
  });

  it('claims on a wake-up hint without waiting for the poll timer', async () => {
    const ran: string[] = [];
    const { memory, node } = setup({ hinted: { handle: (p: string) => void ran.push(p) } }, { pollIntervalMs: 3_600_000 });
    await node.start();
    await settle();
    await memory.jobEnqueue({ job: { name: 'hinted', payload: 'now' } });
    await settle();
    expect(ran).toEqual(['now']);
  });

  it('searches for lapsed leases on poll ticks only: a hinted claim leaves a lapsed lease to the next tick', async () => {
    const searched: boolean[] = [];
    const ran: string[] = [];
    const { timers, memory, node } = setup({ work: { handle: (p: string) => void ran.push(p) } }, { pollIntervalMs: 10_000 }, (store) =>
      new Proxy(store, {
        get(target, prop, receiver) {
          if (prop === 'jobClaim') return (input: Parameters<JobStore['jobClaim']>[0]) => (searched.push(input.includeLapsed!), target.jobClaim(input));
          const value = Reflect.get(target, prop, receiver);
          return typeof value === 'function' ? value.bind(target) : value;
        },
      }),
    );
    // A worker that died holding a lease that lapses at 25 s.
    const { id: orphan } = await memory.jobEnqueue({ job: { name: 'work', payload: 'orphan' } });
    await memory.jobClaim({ workerId: 'dead-node', limit: 1, queues: ['default'], leaseMs: 25_000 });
    await node.start();
    await timers.advance(25_000);
    expect(searched).toEqual([true, true, true]); // start, 10 s, 20 s
    await memory.jobEnqueue({ job: { name: 'work', payload: 'hinted' } });
    await settle();
    expect(ran).toEqual(['hinted']);
    expect(searched.slice(3)).toEqual([false]);
    expect(await memory.jobGet({ jobId: orphan })).toMatchObject({ state: 'running', attempt: 1, workerId: 'dead-node' });
    await timers.advance(5_000);
    await settle();
    expect(searched.slice(4)).toEqual([true]);
    expect(ran).toEqual(['hinted', 'orphan']);
    expect(await memory.jobGet({ jobId: orphan })).toMatchObject({ state: 'succeeded', attempt: 2, workerId: 'node-1' });
  });

  it('claims for, and reports, attempts that settle together in one statement each', async () => {
    const claims: number[] = [];
    const writes: number[] = [];
    const { timers, memory, node } = setup({ quick: { handle: () => undefined } }, { concurrency: 5, claimBatchSize: 5 }, (store) =>
      new Proxy(store, {
        get(target, prop, receiver) {
          if (prop === 'jobClaim') return (input: Parameters<JobStore['jobClaim']>[0]) => (claims.push(input.limit), target.jobClaim(input));
          if (prop === 'jobCompleteMany') return (input: Parameters<JobStore['jobCompleteMany']>[0]) => (writes.push(input.outcomes.length), target.jobCompleteMany(input));
          // A claim that carries outcomes: one call, counted as the claim and the write it stands for.
          if (prop === 'jobCompleteAndClaim') {
            return (input: Parameters<NonNullable<JobStore['jobCompleteAndClaim']>>[0]) => (
              claims.push(input.claim.limit), writes.push(input.outcomes.length), target.jobCompleteAndClaim(input)
            );
          }
          const value = Reflect.get(target, prop, receiver);
          return typeof value === 'function' ? value.bind(target) : value;
        },
      }),
    );
    await memory.jobEnqueueMany({ jobs: Array.from({ length: 15 }, (_, i) => ({ name: 'quick', payload: i })) });
    await node.start();
    await timers.advanceUntil(() => node.stats.succeeded === 15);
    // Sent the moment the first handler settled, these would go out as claims of 1 and writes of 1
    // between the full ones.
    expect(claims.length).toBeGreaterThanOrEqual(3);
    expect(claims.every((limit) => limit === 5)).toBe(true);
    expect(writes.every((outcomes) => outcomes >= 5)).toBe(true);
    expect(writes.reduce((a, b) => a + b, 0)).toBe(15);
  });

  it('sends no claim it asked for once shutdown began before the claim went out', async () => {
    let claimCalls = 0;
    const { memory, node } = setup({ never: { handle: () => undefined } }, {}, (store) =>
      new Proxy(store, {
        get(target, prop, receiver) {
          if (prop === 'jobClaim') claimCalls += 1;
          const value = Reflect.get(target, prop, receiver);
          return typeof value === 'function' ? value.bind(target) : value;
        },
      }),
    );
    const { id } = await memory.jobEnqueue({ job: { name: 'never', payload: null } });
    const before = await memory.jobGet({ jobId: id });
    await node.start();
    // The start asked for a claim; the pump sends it once the current callbacks have run, by which time the node drains.
    await node.stop();
    expect(claimCalls).toBe(0);
    expect(node.status).toBe('stopped');
    expect(await memory.jobGet({ jobId: id })).toEqual(before);
    expect(before).toMatchObject({ attempt: 0, workerId: null });
  });

  it('never runs more attempts at once than its concurrency, and batches outcome writes', async () => {
    let running = 0;
    let peak = 0;
    let completeCalls = 0;
    const { timers, memory, node } = setup(
      {
        work: {
          handle: async () => {
            running += 1;
            peak = Math.max(peak, running);
            await settle(1);
            running -= 1;
          },
        },
      },
      { concurrency: 3, claimBatchSize: 2 },
      (store) =>
        new Proxy(store, {
          get(target, prop, receiver) {
            if (prop === 'jobCompleteMany') {
              // A write that takes a moment, as a real one does, so outcomes pile up behind it.
              return async (...args: Parameters<JobStore['jobCompleteMany']>) => {
                completeCalls += 1;
                await settle(1);
                return target.jobCompleteMany(...args);
              };
            }
            const value = Reflect.get(target, prop, receiver);
            return typeof value === 'function' ? value.bind(target) : value;
          },
        }),
    );
    await memory.jobEnqueueMany({ jobs: Array.from({ length: 30 }, (_, i) => ({ name: 'work', payload: i })) });
    await node.start();
    await timers.advanceUntil(() => node.stats.succeeded === 30);
    expect(peak).toBeLessThanOrEqual(3);
    expect(peak).toBeGreaterThan(1);
    expect(completeCalls).toBeLessThan(30);
    expect((await memory.jobList({ state: 'succeeded', limit: 100 })).length).toBe(30);
  });
});
