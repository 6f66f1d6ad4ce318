import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { SeededRandom } from '../../lib/core/index.js';
import type { ConformanceTarget } from '../../lib/store-kit/conformance/index.js';
import type { CompleteParams, JobStore, OutcomeResult } from '../../lib/store/index.js';
import { FunctionInvoker, WorkerNode } from '../../lib/worker/index.js';
import { ManualTimers, settle } from '../support/manual-timers.js';

/**
 * Which statement a worker's outcomes leave in (issue 36 item 2), on a SQL store: a claim carries
 * the outcomes that wait behind the node's outcome write in flight; outcomes that find no write in
 * flight go out at once in their own, beside the claim. The interleaving is forced: the store's
 * first outcome write is held until the test lets it through.
 */
export function runCarriedOutcomeCases(makeTarget: () => Promise<ConformanceTarget>): void {
  let target: ConformanceTarget;
  beforeAll(async () => {
    target = await makeTarget();
  });
  afterAll(async () => {
    await target.teardown();
  });

  /** A signal the test awaits: resolves once `ready()` is true, checked after every store call. */
  function signals() {
    const waiting: Array<{ ready: () => boolean; resolve: () => void }> = [];
    return {
      until: (ready: () => boolean) => (ready() ? Promise.resolve() : new Promise<void>((resolve) => waiting.push({ ready, resolve }))),
      check: () => {
        for (const w of [...waiting]) if (w.ready()) waiting.splice(waiting.indexOf(w), 1), w.resolve();
      },
    };
  }

  /** The store, its calls recorded in order; the first outcome write is held until `release()`. */
  function recorded(store: JobStore) {
    const calls: Array<{ call: 'claim' | 'write' | 'write+claim'; outcomes: string[]; whileHeld: boolean }> = [];
    const signal = signals();
    let inFlight = 0;
    let held = false;
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const write = store.jobCompleteMany.bind(store);
    store.jobCompleteMany = async (params: CompleteParams): Promise<OutcomeResult[]> => {
      const first = !calls.some((c) => c.call === 'write');
      calls.push({ call: 'write', outcomes: params.outcomes.map((o) => o.jobId), whileHeld: held });
      inFlight += 1;
      signal.check();
      if (first) {
        held = true;
        await released;
        held = false;
      }
      try {
        return await write(params);
      } finally {
        inFlight -= 1;
        signal.check();
      }
    };
    const claim = store.jobClaim.bind(store);
    store.jobClaim = async (params) => {
      calls.push({ call: 'claim', outcomes: [], whileHeld: held });
      inFlight += 1;
      // The second claim answers only once the outcome write beside it has gone out, as on a
      // server where both take a moment (SQLite answers before the write is even sent).
      if (calls.filter((c) => c.call === 'claim').length === 2) await signal.until(() => calls.some((c) => c.call === 'write'));
      try {
        return await claim(params);
      } finally {
        inFlight -= 1;
        signal.check();
      }
    };
    const both = store.jobCompleteAndClaim!.bind(store);
    store.jobCompleteAndClaim = async (params) => {
      calls.push({ call: 'write+claim', outcomes: params.outcomes.map((o) => o.jobId), whileHeld: held });
      inFlight += 1;
      try {
        return await both(params);
      } finally {
        inFlight -= 1;
        signal.check();
      }
    };
    return { calls, release, until: signal.until, check: signal.check, idle: () => inFlight === 0 };
  }

  it('issue 36 item 2: outcomes that find no write in flight go out in their own write beside the claim; those waiting behind it ride the next claim', async () => {
    const { store } = await target.open();
    const log = recorded(store);
    const ids = (await store.jobEnqueueMany({ jobs: Array.from({ length: 6 }, (_, i) => ({ name: 'quick', payload: { i } })) })).map((j) => j.id);
    const ran: string[] = [];
    let settled = 0;
    const timers = new ManualTimers();
    const node = new WorkerNode({
      store,
      invoker: new FunctionInvoker({ quick: { handle: (_payload: unknown, context: { jobId: string }) => void ran.push(context.jobId) } }),
      // Claims of two, two ahead at most: each claim's jobs settle together, and a full batch asks
      // for the next claim while their outcomes wait for a write.
      options: { scheduling: false, concurrency: 2, claimBatchSize: 2, claimAhead: 2, pollIntervalMs: 3_600_000, heartbeatIntervalMs: 10_000, leaseMs: 60_000, workerId: 'carry-1' },
      clock: timers.clock,
      timers,
      random: new SeededRandom(11n),
    });
    node.events.on('settled', () => {
      settled += 1;
      log.check();
    });
    await node.start();
    // The first two jobs' outcomes find no write in flight. The claim their full batch asked for
    // carries none of them; they go out in a write of their own beside it (held here).
    await log.until(() => log.calls.length >= 3);
    expect(log.calls.slice(0, 3)).toEqual([
      { call: 'claim', outcomes: [], whileHeld: false },
      { call: 'claim', outcomes: [], whileHeld: false },
      { call: 'write', outcomes: ids.slice(0, 2), whileHeld: false },
    ]);
    // The next two settle while that write is held: the claim after them carries them, and the
    // two after those ride the claim after that.
    await log.until(() => log.calls.length >= 5);
    expect(log.calls.slice(3)).toEqual([
      { call: 'write+claim', outcomes: ids.slice(2, 4), whileHeld: true },
      { call: 'write+claim', outcomes: ids.slice(4, 6), whileHeld: true },
    ]);
    // Those four are recorded by the claims that carried them, while the first write still waits.
    await log.until(() => settled === 4);
    log.release();
    await log.until(() => settled === 6);
    await node.stop();
    // Every outcome left in exactly one statement, and each job ran once.
    expect(log.calls.flatMap((c) => c.outcomes).sort()).toEqual([...ids].sort());
    expect([...ran].sort()).toEqual([...ids].sort());
    for (const id of ids) expect(await store.jobGet({ jobId: id })).toMatchObject({ state: 'succeeded', attempt: 1 });
  });

  it('issue 36 item 2: after a claim that came back short (a cap held jobs back), the next claim carries every waiting outcome and takes the slots they free', async () => {
    const { store } = await target.open();
    await store.concurrencyLimitSet({ target: { queue: 'capped' }, max: 2 });
    // No wake-up hints: a hint the store sends as slots free (NOTIFY, on PostgreSQL) arrives when it
    // will, and a claim it sends before the pair settles carries nothing. This node claims when the
    // test polls it.
    store.subscribeWakeHints = async () => ({ close: async () => {} });
    const log = recorded(store);
    log.release();
    const ids = (await store.jobEnqueueMany({ jobs: Array.from({ length: 6 }, (_, i) => ({ name: 'quick', queue: 'capped', payload: { i } })) })).map((j) => j.id);
    const gates: Array<() => void> = [];
    let started = 0;
    let settled = 0;
    const timers = new ManualTimers();
    const node = new WorkerNode({
      store,
      invoker: new FunctionInvoker({
        quick: {
          handle: () =>
            new Promise<void>((resolve) => {
              started += 1;
              gates.push(resolve);
              log.check();
            }),
        },
      }),
      options: { scheduling: false, queues: ['capped'], concurrency: 4, claimBatchSize: 4, claimAhead: 0, pollIntervalMs: 3_600_000, heartbeatIntervalMs: 10_000, leaseMs: 60_000, workerId: 'carry-2' },
      clock: timers.clock,
      timers,
      random: new SeededRandom(13n),
    });
    node.events.on('settled', () => {
      settled += 1;
      log.check();
    });
    await node.start();
    // The cap lets two of four start, so every claim comes back short. Each pair is released with
    // a poll, as a hint would come: the claim it asks for leaves after the pair has settled, with
    // no outcome write in flight, and carries both outcomes; it takes the two slots they free.
    for (const pair of [2, 4, 6]) {
      await log.until(() => started === pair && log.idle());
      await settle(3);
      for (const release of gates.splice(0)) release();
      node.poll();
      await log.until(() => settled === pair);
    }
    await node.stop();
    expect(log.calls.filter((c) => c.call === 'write')).toEqual([]);
    expect(log.calls.filter((c) => c.outcomes.length > 0)).toEqual([
      { call: 'write+claim', outcomes: ids.slice(0, 2), whileHeld: false },
      { call: 'write+claim', outcomes: ids.slice(2, 4), whileHeld: false },
      { call: 'write+claim', outcomes: ids.slice(4, 6), whileHeld: false },
    ]);
    for (const id of ids) expect(await store.jobGet({ jobId: id })).toMatchObject({ state: 'succeeded', attempt: 1 });
  });
}
