import { afterEach, describe, expect, it } from '@jest/globals';
import { InvalidArgumentError, SeededRandom } from '../../lib/core/index.js';
import { MemoryJobStore } from '../../lib/store/index.js';
import {
  FunctionInvoker,
  JobTimeoutError,
  PermanentJobError,
  WorkerNode,
  type AttemptHook,
  type AttemptHookContext,
  type FunctionHandler,
  type JobContext,
  type SchedulerLogger,
} from '../../lib/worker/index.js';
import { ManualTimers, settle } from '../support/manual-timers.js';

const SECRET = { card: '4111-1111-1111-1111' };

const nodes: WorkerNode[] = [];
afterEach(async () => {
  for (const node of nodes.splice(0)) if (node.status !== 'stopped') void node.stop();
});

function capturingLogger(): SchedulerLogger & { readonly lines: string[] } {
  const lines: string[] = [];
  return {
    lines,
    log: (m) => lines.push(`log ${m}`),
    warn: (m) => lines.push(`warn ${m}`),
    error: (m) => lines.push(`error ${m}`),
    debug: (m) => lines.push(`debug ${m}`),
  };
}

/** One node on a manual clock, with one job enqueued, run until its first attempt settled. */
async function runOnce(handler: FunctionHandler<never>, attemptHooks?: readonly AttemptHook[]) {
  const timers = new ManualTimers();
  const store = new MemoryJobStore({ clock: timers.clock });
  const logger = capturingLogger();
  const node = new WorkerNode({
    store,
    invoker: new FunctionInvoker({ 'card.charge': handler }),
    options: { workerId: 'node-1', concurrency: 2 },
    clock: timers.clock,
    timers,
    random: new SeededRandom(7n),
    logger,
    attemptHooks,
  });
  nodes.push(node);
  const { id } = await store.jobEnqueue({ job: { id: '0190a0b0-0000-7000-8000-000000000001', name: 'card.charge', payload: SECRET, maxAttempts: 3 } });
  const done = node.settledOnce(id);
  await node.start();
  await settle();
  const settled = await done;
  const job = await store.jobGet({ jobId: id });
  const attemptLines = logger.lines.filter((line) => line.includes('card.charge'));
  return { job, settled, lines: attemptLines, stats: { ...node.stats }, timers, node };
}

describe('attempt hooks around each handler invocation', () => {
  it('run in registration order, the first outermost, around the handler', async () => {
    const trail: string[] = [];
    const hook =
      (name: string): AttemptHook =>
      async (_ctx, next) => {
        trail.push(`${name}:before`);
        await next();
        trail.push(`${name}:after`);
      };
    const { job } = await runOnce({ handle: () => void trail.push('handler') }, [hook('a'), hook('b'), hook('c')]);
    expect(trail).toEqual(['a:before', 'b:before', 'c:before', 'handler', 'c:after', 'b:after', 'a:after']);
    expect(job).toMatchObject({ state: 'succeeded', attempt: 1 });
  });

  it('see the attempt as the handler sees it: ids, queue, attempt, the same payload and signal, the claimed record', async () => {
    let seen: AttemptHookContext | undefined;
    let handlerContext: JobContext | undefined;
    let handlerPayload: unknown;
    const { job } = await runOnce(
      {
        handle: (payload, ctx) => {
          handlerPayload = payload;
          handlerContext = ctx;
        },
      },
      [
        async (ctx, next) => {
          seen = ctx;
          await next();
        },
      ],
    );
    expect(seen).toMatchObject({ jobId: job!.id, name: 'card.charge', queue: 'default', attempt: 1, maxAttempts: 3, workerId: 'node-1' });
    expect(seen!.payload).toBe(handlerPayload);
    expect(seen!.signal).toBe(handlerContext!.signal);
    expect(seen!.job).toMatchObject({ id: job!.id, runAt: job!.runAt, createdAt: job!.createdAt, scheduledFor: job!.scheduledFor, occurrenceId: job!.occurrenceId, state: 'running' });
    expect(Object.isFrozen(seen)).toBe(true);
  });

  it('pass the handler\'s success through: next() resolves, and the output is recorded', async () => {
    const results: unknown[] = [];
    const { job } = await runOnce({ handle: (_p, ctx) => ctx.setOutput({ charged: true }) }, [
      async (_ctx, next) => {
        results.push(await next());
      },
    ]);
    expect(results).toEqual([undefined]);
    expect(job).toMatchObject({ state: 'succeeded', output: { charged: true } });
  });

  it('pass the handler\'s error through: next() rejects with it, and a rethrow fails the attempt as the handler did', async () => {
    const thrown = new Error('card declined');
    const seen: unknown[] = [];
    const withHook = await runOnce(
      {
        handle: () => {
          throw thrown;
        },
      },
      [
        async (_ctx, next) => {
          try {
            await next();
          } catch (error) {
            seen.push(error);
            throw error;
          }
        },
      ],
    );
    expect(seen).toEqual([thrown]);
    const bare = await runOnce({
      handle: () => {
        throw thrown;
      },
    });
    expect(withHook.job).toEqual(bare.job);
    expect(withHook.lines).toEqual(bare.lines);
    expect(withHook.job).toMatchObject({ state: 'scheduled', attempt: 1, lastError: expect.stringMatching(/^Error: card declined/) });
  });

  it('a hook that throws before next() fails the attempt as a handler throw would: same outcome, same log line, no payload in it', async () => {
    let handlerRan = false;
    const hooked = await runOnce({ handle: () => void (handlerRan = true) }, [
      async () => {
        throw new Error('card declined');
      },
    ]);
    const bare = await runOnce({
      handle: () => {
        throw new Error('card declined');
      },
    });
    expect(handlerRan).toBe(false);
    expect(hooked.job).toMatchObject({ state: 'scheduled', attempt: 1, lastError: expect.stringMatching(/^Error: card declined/) });
    expect({ ...hooked.job, lastError: null, updatedAt: null }).toEqual({ ...bare.job, lastError: null, updatedAt: null });
    expect(hooked.lines).toEqual(bare.lines);
    expect(hooked.lines.some((line) => line.includes('attempt 1 of 3 failed (Error: card declined); retrying in'))).toBe(true);
    expect(hooked.lines.join('\n')).not.toContain(SECRET.card);
    expect(hooked.stats).toEqual(bare.stats);
  });

  it('a synchronous throw and a PermanentJobError take the same paths as from a handler', async () => {
    const sync = await runOnce({ handle: () => undefined }, [
      (() => {
        throw new Error('sync');
      }) as unknown as AttemptHook,
    ]);
    expect(sync.job).toMatchObject({ state: 'scheduled', lastError: expect.stringMatching(/^Error: sync/) });
    const permanent = await runOnce({ handle: () => undefined }, [
      async () => {
        throw new PermanentJobError('never valid');
      },
    ]);
    expect(permanent.job).toMatchObject({ state: 'dead_lettered', attempt: 1 });
  });

  it('with no hook, or only pass-through hooks, an attempt runs exactly as before', async () => {
    const handler: FunctionHandler<never> = {
      handle: (_p, ctx) => {
        if (ctx.attempt === 1) throw new Error('first try fails');
      },
    };
    const bare = await runOnce(handler);
    const none = await runOnce(handler, []);
    const through = await runOnce(handler, [(_ctx, next) => next(), async (_ctx, next) => next()]);
    // The stored error keeps the stack, whose frames now pass through the hooks; the rest is the same.
    const firstLine = (job: typeof bare.job) => ({ ...job, lastError: job!.lastError!.split('\n')[0] });
    expect(none.job).toEqual(bare.job);
    expect(firstLine(through.job)).toEqual(firstLine(bare.job));
    expect(through.job!.lastError).toMatch(/^Error: first try fails\n/);
    expect(none.lines).toEqual(bare.lines);
    expect(through.lines).toEqual(bare.lines);
    expect(through.stats).toEqual(bare.stats);
    expect(through.settled).toEqual(bare.settled);
  });

  it('run inside the attempt\'s timeout', async () => {
    const timers = new ManualTimers();
    const store = new MemoryJobStore({ clock: timers.clock });
    const node = new WorkerNode({
      store,
      invoker: new FunctionInvoker({ slow: { timeoutMs: 1_000, handle: () => undefined } }),
      options: { workerId: 'node-1' },
      clock: timers.clock,
      timers,
      random: new SeededRandom(1n),
      attemptHooks: [(ctx) => new Promise<void>((_resolve, reject) => ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason)))],
    });
    nodes.push(node);
    const { id } = await store.jobEnqueue({ job: { name: 'slow', payload: null } });
    const done = node.settledOnce(id);
    await node.start();
    await timers.advance(1_000);
    await done;
    const job = await store.jobGet({ jobId: id });
    expect(job).toMatchObject({ state: 'scheduled', lastError: expect.stringMatching(/^JobTimeoutError: timed out after 1000 ms/) });
    expect(new JobTimeoutError(1_000).message).toBe('timed out after 1000 ms');
  });

  it('never end the attempt before the handler: a hook that does not await next() gets the handler\'s result', async () => {
    let finish!: () => void;
    const gate = new Promise<void>((resolve) => (finish = resolve));
    let handlerDone = false;
    const timers = new ManualTimers();
    const store = new MemoryJobStore({ clock: timers.clock });
    const node = new WorkerNode({
      store,
      invoker: new FunctionInvoker({
        late: {
          handle: async () => {
            await gate;
            handlerDone = true;
            throw new Error('late failure');
          },
        },
      }),
      options: { workerId: 'node-1' },
      clock: timers.clock,
      timers,
      random: new SeededRandom(1n),
      attemptHooks: [
        async (_ctx, next) => {
          void next();
        },
      ],
    });
    nodes.push(node);
    const { id } = await store.jobEnqueue({ job: { name: 'late', payload: null, maxAttempts: 3 } });
    const done = node.settledOnce(id);
    await node.start();
    await settle();
    expect((await store.jobGet({ jobId: id }))!.state).toBe('running');
    finish();
    await done;
    expect(handlerDone).toBe(true);
    expect(await store.jobGet({ jobId: id })).toMatchObject({ state: 'scheduled', lastError: expect.stringMatching(/^Error: late failure/) });
  });

  it('refuse a second next() in one attempt, and a handler runs once', async () => {
    let calls = 0;
    const errors: unknown[] = [];
    const { job } = await runOnce({ handle: () => void (calls += 1) }, [
      async (_ctx, next) => {
        await next();
        await next().catch((error: unknown) => errors.push(error));
      },
    ]);
    expect(calls).toBe(1);
    expect(errors).toEqual([new Error('attempt hook 0 called next() more than once.')]);
    expect(job).toMatchObject({ state: 'succeeded' });
  });

  it('a WorkerNode refuses attemptHooks that are not a list of functions, with one sentence', () => {
    const build = (attemptHooks: unknown) => () => new WorkerNode({ store: new MemoryJobStore(), invoker: new FunctionInvoker({}), attemptHooks: attemptHooks as never });
    expect(build({})).toThrow(new InvalidArgumentError('attemptHooks must be an array of functions (context, next) => Promise<void>, got [object Object].', 'attemptHooks'));
    expect(build([() => undefined, 'trace'])).toThrow('attemptHooks[1] must be a function (context, next) => Promise<void>, got "trace".');
  });
});
