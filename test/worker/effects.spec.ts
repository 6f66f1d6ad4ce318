import { afterEach, describe, expect, it } from '@jest/globals';
import { SeededRandom, visibleText } from '../../lib/core/index.js';
import { MemoryJobStore } from '../../lib/store/index.js';
import { FunctionInvoker, WorkerNode, type FunctionHandler, type SchedulerLogger, type TransitionEvent, type TransitionObserver, type WorkerOptions } from '../../lib/worker/index.js';
import { ManualTimers, settle } from '../support/manual-timers.js';

const nodes: WorkerNode[] = [];
afterEach(async () => {
  for (const node of nodes.splice(0)) if (node.status !== 'stopped') void node.stop();
});

function recordingLogger() {
  const lines: string[] = [];
  const logger: SchedulerLogger = {
    log: (m) => void lines.push(`log ${m}`),
    warn: (m) => void lines.push(`warn ${m}`),
    error: (m) => void lines.push(`error ${m}`),
  };
  return { lines, logger };
}

function setup(handlers: Record<string, FunctionHandler<never>>, options: WorkerOptions = {}, observers: TransitionObserver[] = []) {
  const timers = new ManualTimers();
  const store = new MemoryJobStore({ clock: timers.clock });
  const { lines, logger } = recordingLogger();
  const node = new WorkerNode({
    store,
    invoker: new FunctionInvoker(handlers),
    options: { concurrency: 4, pollIntervalMs: 1_000, heartbeatIntervalMs: 10_000, leaseMs: 30_000, workerId: 'node-1', ...options },
    clock: timers.clock,
    timers,
    random: new SeededRandom(3n),
    logger,
    observers,
  });
  nodes.push(node);
  return { timers, store, node, lines };
}

describe('dependencies through a worker', () => {
  it('runs reserve → charge → ship in order, each reading its ancestors\' outputs', async () => {
    const order: string[] = [];
    const reads: unknown[] = [];
    let ids: Record<string, string> = {};
    const { timers, store, node } = setup({
      reserve: { handle: (_p, ctx) => (order.push('reserve'), ctx.setOutput({ reservation: 'r-1' })) },
      charge: {
        handle: async (_p, ctx) => {
          order.push('charge');
          reads.push(await ctx.parentOutput(ids.reserve!));
          ctx.setOutput({ chargeId: 'c-9' });
        },
      },
      ship: {
        handle: async (_p, ctx) => {
          order.push('ship');
          // The grandparent is an ancestor too; an unrelated job is not.
          reads.push(await ctx.parentOutput(ids.reserve!), await ctx.parentOutput(ids.charge!), await ctx.parentOutput(ids.other!));
        },
      },
      other: { handle: (_p, ctx) => ctx.setOutput('not yours') },
    });
    const reserve = (await store.jobEnqueue({ job: { name: 'reserve', payload: {} } })).id;
    const charge = (await store.jobEnqueue({ job: { name: 'charge', payload: {}, dependsOn: [reserve] } })).id;
    const ship = (await store.jobEnqueue({ job: { name: 'ship', payload: {}, dependsOn: [charge] } })).id;
    const other = (await store.jobEnqueue({ job: { name: 'other', payload: {} } })).id;
    ids = { reserve, charge, ship, other };
    await node.start();
    for (let i = 0; i < 5 && (await store.jobGet({ jobId: ship }))?.state !== 'succeeded'; i++) await timers.advance(1_000);
    expect(order).toEqual(['reserve', 'charge', 'ship']);
    expect(reads).toEqual([{ reservation: 'r-1' }, { reservation: 'r-1' }, { chargeId: 'c-9' }, undefined]);
  });

  it('cancels the rest of the chain when a parent dead-letters under on_success', async () => {
    const { timers, store, node } = setup({
      charge: { handle: () => Promise.reject(new Error('card declined')) },
      ship: { handle: () => undefined },
    });
    const charge = (await store.jobEnqueue({ job: { name: 'charge', payload: {}, maxAttempts: 1 } })).id;
    const ship = (await store.jobEnqueue({ job: { name: 'ship', payload: {}, dependsOn: [charge] } })).id;
    await node.start();
    await timers.advance(1_000);
    expect((await store.jobGet({ jobId: charge }))?.state).toBe('dead_lettered');
    expect(await store.jobGet({ jobId: ship })).toMatchObject({ state: 'cancelled', lastError: expect.stringContaining(charge) });
  });
});

describe('payload validation', () => {
  const validate = (payload: unknown) => {
    if (typeof (payload as { orderId?: unknown })?.orderId !== 'string') throw new Error('orderId must be a string, e.g. ord-secret-123');
  };

  it('quarantines a job whose payload fails validation without running it or using an attempt, loudly but without the reason in the log', async () => {
    let runs = 0;
    const { store, node, lines } = setup({ confirm: { validate, handle: () => void runs++ } });
    const { id } = await store.jobEnqueue({ job: { name: 'confirm', payload: { orderId: 42 }, maxAttempts: 3 } });
    await node.start();
    await settle();
    expect(runs).toBe(0);
    const job = await store.jobGet({ jobId: id });
    expect(job).toMatchObject({ state: 'quarantined', lastError: expect.stringContaining('orderId must be a string') });
    expect(node.stats.quarantined).toBe(1);
    const line = lines.find((l) => l.includes(id))!;
    expect(line).toMatch(/^error QUARANTINED confirm .* failed the job's validation/);
    expect(lines.join('\n')).not.toContain('ord-secret-123');
  });

  it('quarantines on a validator that returns false, and replay brings the job back once the payload is accepted', async () => {
    let accept = false;
    const ran: number[] = [];
    const { timers, store, node } = setup({ confirm: { validate: () => accept, handle: (_p, ctx) => void ran.push(ctx.attempt) } });
    const { id } = await store.jobEnqueue({ job: { name: 'confirm', payload: {} } });
    await node.start();
    await settle();
    expect(await store.jobGet({ jobId: id })).toMatchObject({ state: 'quarantined', lastError: expect.stringContaining('returned false') });
    accept = true;
    await store.jobReplay({ jobId: id });
    await timers.advance(1_000);
    expect(await store.jobGet({ jobId: id })).toMatchObject({ state: 'succeeded', attempt: 1 });
    expect(ran).toEqual([1]);
  });

  it('accepts any return value other than false, so assertion functions and schema parsers fit', async () => {
    const { store, node } = setup({ confirm: { validate: () => undefined, handle: () => undefined } });
    const { id } = await store.jobEnqueue({ job: { name: 'confirm', payload: {} } });
    await node.start();
    await settle();
    expect((await store.jobGet({ jobId: id }))?.state).toBe('succeeded');
  });
});

describe('maintenance sweep', () => {
  it('deletes succeeded and cancelled jobs once they are older than retentionMs, and keeps everything else', async () => {
    const { timers, store, node } = setup({ ok: { handle: () => undefined }, bad: { handle: () => Promise.reject(new Error('no')) } }, { retentionMs: 60_000 });
    const ok = (await store.jobEnqueue({ job: { name: 'ok', payload: {} } })).id;
    const bad = (await store.jobEnqueue({ job: { name: 'bad', payload: {}, maxAttempts: 1 } })).id;
    const cancelled = (await store.jobEnqueue({ job: { name: 'ok', payload: {}, runAt: new Date(timers.clock.now() + 3_600_000) } })).id;
    await store.jobCancel({ jobId: cancelled });
    await node.start();
    await settle();
    expect((await node.sweep()).purged).toBe(0);
    await timers.advance(60_001);
    const report = await node.sweep();
    expect(report.purged).toBe(2);
    expect(await store.jobGet({ jobId: ok })).toBeNull();
    expect(await store.jobGet({ jobId: cancelled })).toBeNull();
    expect(await store.jobHistory({ jobId: ok })).toEqual([]);
    expect((await store.jobGet({ jobId: bad }))?.state).toBe('dead_lettered');
    expect(node.stats.purgedJobs).toBe(2);
  });

  it('keeps finished jobs when retentionMs is null', async () => {
    const { timers, store, node } = setup({ ok: { handle: () => undefined } }, { retentionMs: null });
    const { id } = await store.jobEnqueue({ job: { name: 'ok', payload: {} } });
    await node.start();
    await settle();
    await node.stop();
    timers.clock.set(timers.clock.now() + 30 * 86_400_000);
    expect((await node.sweep()).purged).toBe(0);
    expect((await store.jobGet({ jobId: id }))?.state).toBe('succeeded');
  });

  it('refuses a negative retention with a typed error before the node exists', () => {
    expect(() => setup({}, { retentionMs: -1 })).toThrow(/retentionMs must be a whole number/);
    expect(() => setup({}, { historyPerJob: 0 })).toThrow(/historyPerJob must be a whole number/);
  });
});

describe('observers on a running node', () => {
  it('posts dead-lettered jobs to an observer after the outcome committed, and runs no dispatcher without observers', async () => {
    const events: TransitionEvent[] = [];
    const observer: TransitionObserver = { id: 'alerts', to: ['dead_lettered'], deliver: (e) => void events.push(e) };
    const { timers, store, node } = setup({ bad: { handle: () => Promise.reject(new Error('boom')) } }, { observerPollIntervalMs: 500 }, [observer]);
    await node.start(); // registers the observer's cursor before the first claim
    const { id } = await store.jobEnqueue({ job: { name: 'bad', payload: {}, maxAttempts: 1 } });
    await timers.advance(1_000);
    expect(events).toEqual([expect.objectContaining({ jobId: id, name: 'bad', state: 'dead_lettered', attempt: 1, error: expect.stringContaining('boom') })]);
    expect((await store.jobGet({ jobId: id }))?.state).toBe('dead_lettered');

    const bare = setup({});
    await bare.node.start();
    expect(bare.node.dispatcher).toBeUndefined();
    expect(node.dispatcher).toBeDefined();
  });

  it('issue 19 item 5: hears the common dead letter, two attempts failing alike, with its error, as the README alert logs it', async () => {
    const events: TransitionEvent[] = [];
    const observer: TransitionObserver = { id: 'alerts', to: ['dead_lettered'], deliver: (e) => void events.push(e) };
    const handler = { retry: { baseDelayMs: 1_000, maxDelayMs: 1_000, jitter: false }, handle: () => Promise.reject(new Error('card declined')) };
    const { timers, store, node } = setup({ 'billing.charge': handler }, { observerPollIntervalMs: 500 }, [observer]);
    await node.start();
    const { id } = await store.jobEnqueue({ job: { name: 'billing.charge', payload: {}, maxAttempts: 2 } });
    await timers.advance(5_000);
    expect(events).toHaveLength(1);
    const [event] = events;
    // The DeadLetterAlerts line of docs/observers.md, as it renders this event.
    const error = visibleText(event!.error?.split('\n')[0] ?? '-', { maxLength: 200 });
    expect(`${event!.name} ${event!.jobId} dead-lettered after attempt ${event!.attempt}: ${error}`).toBe(
      `billing.charge ${id} dead-lettered after attempt 2: Error: card declined`,
    );
  });
});

describe('issue 19, smaller bad-input gaps: the output checked is the output written', () => {
  it('setOutput keeps the value it checked, whatever a getter or a later change says at the success write', async () => {
    let reads = 0;
    const output = { get text() { return reads++ === 0 ? 'ok' : 'a\u0000b'; }, list: [1] };
    const { timers, store, node } = setup({
      report: {
        handle: (_p, ctx) => {
          ctx.setOutput(output);
          output.list.push(Number.NaN);
        },
      },
    });
    const { id } = await store.jobEnqueue({ job: { name: 'report', payload: {} } });
    await node.start();
    for (let i = 0; i < 5 && (await store.jobGet({ jobId: id }))?.state !== 'succeeded'; i++) await timers.advance(1_000);
    expect(await store.jobGet({ jobId: id })).toMatchObject({ state: 'succeeded', attempt: 1, output: { text: 'ok', list: [1] } });
    expect(reads).toBe(1);
  });
});
