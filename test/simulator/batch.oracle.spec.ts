import { describe, expect, it } from '@jest/globals';
import { isDeadLetterState, SeededRandom, type LifecycleRules } from '../../lib/core/index.js';
import { MemoryJobStore, type EnqueueInput, type JobRow, type Outcome } from '../../lib/store/index.js';
import { BatchIds, BatchOracle, EventLog, MUTANTS, simUuid, StoreGateway, TERMINAL, VirtualScheduler, type Caller, type RowView, type SimEvent } from '../../lib/simulator/index.js';
import { call, feed, row, running, T0, worker, write } from './history-builder.js';

const producer = { kind: 'producer' } as const;
const operator = { kind: 'operator' } as const;
const END = { now: T0 + 60_000, rows: [], drained: true };

type Callbacks = Partial<Record<'onSuccess' | 'onComplete' | 'onFailure', string>>;

/** A `jobEnqueueBatch` of `jobs` with `callbacks` in batch `batchId`, logged as the gateway logs it. */
function enqueueBatch(batchId: string, jobs: readonly string[], callbacks: Callbacks, at = T0): SimEvent[] {
  const inserts = [...jobs.map((id) => write(undefined, due(id), at)), ...Object.values(callbacks).map((id) => write(undefined, waiting(id), at))];
  const result = { batchId, jobs: jobs.map((id) => ({ id, created: true })), callbacks };
  return [...inserts, call('jobEnqueueBatch', producer, { jobs: jobs.length, callbacks: Object.keys(callbacks) }, result, at)];
}

/** A `jobEnqueueMany` of a dependant of `parents` in mode `on_failure`, inserted in `state`. */
function enqueueWatcher(id: string, parents: readonly string[], state: RowView['state'] = 'awaiting_parents', at = T0): SimEvent[] {
  const logged = [{ id, dependsOn: parents, dependencyMode: 'on_failure', concurrencyKey: null, concurrencyLimit: null }];
  return [write(undefined, row({ id, state }), at), call('jobEnqueueMany', producer, logged, [{ id, created: true }], at)];
}

const waiting = (id: string) => row({ id, state: 'awaiting_parents' });
const due = (id: string, overrides: Partial<RowView> = {}) => row({ id, ...overrides });
const leased = (id: string, at: number, attempt = 1) => running({ id, attempt, workerId: `w-${id}`, leasedUntil: at + 5_000 });
const ended = (id: string, state: RowView['state'], attempt = 1) => row({ id, state, attempt });

/** A worker claims `id` at `at`, from `from` (due, unless given). */
const start = (id: string, at: number, from: RowView = due(id), attempt = 1): SimEvent[] => [write(from, leased(id, at, attempt), at), call('jobClaim', worker(`w-${id}`), [{}], [], at)];
/** `id` ends in `state`; `settles` are the writes its end makes to its dependants, in the same call. */
const end = (id: string, state: RowView['state'], at: number, settles: readonly SimEvent[] = []): SimEvent[] => [
  write(leased(id, at - 1), ended(id, state), at),
  ...settles,
  call('jobCompleteMany', worker(`w-${id}`), {}, [], at),
];
/** The store lowers a waiter's latch, releases it, or cancels it unrun. */
const lower = (id: string, at: number) => write(waiting(id), row({ id, state: 'awaiting_parents', pendingParents: 1 }), at);
const release = (id: string, at: number) => write(waiting(id), due(id), at);
const skip = (id: string, at: number) => write(waiting(id), ended(id, 'cancelled', 0), at);
const cancel = (id: string, at: number, from: RowView = waiting(id)): SimEvent[] => [write(from, ended(id, 'cancelled', 0), at), call('jobCancel', operator, [{ jobId: id }], { id, outcome: 'cancelled' }, at)];

function judge(events: readonly SimEvent[], finish = true): BatchOracle {
  const oracle = new BatchOracle();
  feed(oracle, events);
  if (finish) oracle.finish(END);
  return oracle;
}

describe('batch callbacks oracle', () => {
  it('accepts a batch that succeeded: onSuccess and onComplete run once every job ended, onFailure is cancelled unrun', () => {
    const oracle = judge([
      ...enqueueBatch('B', ['a', 'b'], { onSuccess: 's', onComplete: 'c', onFailure: 'f' }),
      ...start('a', T0 + 10),
      ...start('b', T0 + 10),
      ...end('a', 'succeeded', T0 + 20, [lower('s', T0 + 20), lower('c', T0 + 20), lower('f', T0 + 20)]),
      ...end('b', 'succeeded', T0 + 30, [release('s', T0 + 30), release('c', T0 + 30), skip('f', T0 + 30)]),
      ...start('s', T0 + 40),
      ...start('c', T0 + 40),
      // A retry or a reclaim of a callback is judged as its first claim was.
      ...start('c', T0 + 9_000, leased('c', T0 + 40), 2),
      ...end('s', 'succeeded', T0 + 9_500),
      ...end('c', 'succeeded', T0 + 9_500),
    ]);
    expect(oracle.report()).toEqual({ name: 'batch_callbacks', violations: 0, examples: [] });
    expect({ run: oracle.callbacksRun, skipped: oracle.callbacksSkipped }).toEqual({ run: 2, skipped: 1 });
  });

  it('accepts a batch with a failure: onSuccess is cancelled at the failure, before the other jobs end; onComplete and onFailure run', () => {
    const oracle = judge([
      ...enqueueBatch('B', ['a', 'b'], { onSuccess: 's', onComplete: 'c', onFailure: 'f' }),
      ...start('a', T0 + 10),
      ...start('b', T0 + 10),
      ...end('a', 'dead_lettered', T0 + 20, [skip('s', T0 + 20), lower('c', T0 + 20), lower('f', T0 + 20)]),
      ...end('b', 'succeeded', T0 + 30, [release('c', T0 + 30), release('f', T0 + 30)]),
      ...start('c', T0 + 40),
      ...start('f', T0 + 40),
    ]);
    expect(oracle.report().violations).toBe(0);
    expect({ run: oracle.callbacksRun, skipped: oracle.callbacksSkipped }).toEqual({ run: 2, skipped: 1 });
  });

  it('counts a callback claimed while a job of its batch has not ended, whatever its kind', () => {
    for (const kind of ['onSuccess', 'onComplete', 'onFailure'] as const) {
      const oracle = judge([...enqueueBatch('B', ['a', 'b'], { [kind]: 'x' }), ...start('a', T0 + 10), ...end('a', 'dead_lettered', T0 + 20), ...start('x', T0 + 30, waiting('x'))], false);
      // onSuccess is off at a's failure: that the claim came early is the first thing said.
      expect(oracle.report()).toMatchObject({ violations: 1, examples: [`${kind} x of batch B started attempt 1 while b was scheduled`] });
    }
    const many = judge([...enqueueBatch('B', ['a', 'b', 'c'], { onComplete: 'x' }), ...start('x', T0 + 30, waiting('x'))], false);
    expect(many.report().examples).toEqual(['onComplete x of batch B started attempt 1 while a was scheduled (and 2 more had not ended)']);
  });

  it('counts onSuccess claimed after a failure, and onFailure claimed when every job succeeded', () => {
    const success = judge([...enqueueBatch('B', ['a', 'b'], { onSuccess: 's' }), ...start('a', T0), ...start('b', T0), ...end('a', 'quarantined', T0 + 10), ...end('b', 'succeeded', T0 + 20), ...start('s', T0 + 30)]);
    expect(success.report()).toMatchObject({ violations: 1, examples: ['onSuccess s of batch B started attempt 1 though a job it waits for did not succeed (quarantined×1 succeeded×1)'] });
    const failure = judge([...enqueueBatch('B', ['a', 'b'], { onFailure: 'f' }), ...start('a', T0), ...start('b', T0), ...end('a', 'succeeded', T0 + 10), ...end('b', 'succeeded', T0 + 20), ...start('f', T0 + 30)]);
    expect(failure.report()).toMatchObject({ violations: 1, examples: ['onFailure f of batch B started attempt 1 though every job it waits for succeeded (succeeded×2)'] });
  });

  it('judges by each job’s first end: a failure replayed to success still calls for onFailure, and still rules onSuccess out', () => {
    const replayed = [
      ...enqueueBatch('B', ['a'], { onSuccess: 's', onFailure: 'f' }),
      ...start('a', T0),
      ...end('a', 'dead_lettered', T0 + 10, [skip('s', T0 + 10), release('f', T0 + 10)]),
      write(ended('a', 'dead_lettered'), due('a', { attempt: 0 }), T0 + 20),
      call('jobReplay', operator, [{ jobId: 'a' }], { id: 'a', state: 'scheduled' }, T0 + 20),
      ...start('a', T0 + 30),
      ...end('a', 'succeeded', T0 + 40),
    ];
    expect(judge([...replayed, ...start('f', T0 + 50)]).report().violations).toBe(0);
    expect(judge([...replayed, ...start('f', T0 + 50), ...start('s', T0 + 60, ended('s', 'cancelled', 0))]).report()).toMatchObject({ violations: 1, examples: [expect.stringContaining('onSuccess s of batch B started attempt 1 though a job it waits for did not succeed')] });
  });

  it('counts the store cancelling onComplete, or onFailure before every job ended or after a failure, and never an operator’s cancel', () => {
    const base = [...enqueueBatch('B', ['a', 'b'], { onComplete: 'c', onFailure: 'f' }), ...start('a', T0), ...start('b', T0)];
    const complete = judge([...base, ...end('a', 'succeeded', T0 + 10, [skip('c', T0 + 10)])], false);
    expect(complete.report()).toMatchObject({ violations: 1, examples: ['onComplete c of batch B was cancelled while b was running, and no operator cancelled it'] });
    const early = judge([...base, ...end('a', 'succeeded', T0 + 10, [skip('f', T0 + 10)])], false);
    expect(early.report()).toMatchObject({ violations: 1, examples: ['onFailure f of batch B was cancelled while b was running, and no operator cancelled it'] });
    const failed = judge([...base, ...end('a', 'succeeded', T0 + 10), ...end('b', 'cancelled', T0 + 20, [release('c', T0 + 20), skip('f', T0 + 20)]), ...start('c', T0 + 30)]);
    expect(failed.report()).toMatchObject({ violations: 1, examples: ['onFailure f of batch B was cancelled though a job it waits for did not succeed (succeeded×1 cancelled×1), and no operator cancelled it'] });
    // An operator may cancel them at any time: one alone, or the whole batch.
    expect(judge([...base, ...cancel('c', T0 + 5), ...cancel('f', T0 + 5, due('f'))]).report().violations).toBe(0);
    const batch = [skip('c', T0 + 5), skip('f', T0 + 5), write(leased('a', T0), { ...leased('a', T0), cancelRequested: true }, T0 + 5), call('jobCancelBatch', operator, [{ batchId: 'B' }], { cancelled: 2, cancelRequested: 2 }, T0 + 5)];
    const cancelled = judge([...base, ...batch]);
    expect(cancelled.report().violations).toBe(0);
    expect(cancelled.batchCancels).toBe(1);
    // A cancel that names another batch excuses nothing.
    const other = judge([...base, skip('c', T0 + 5), call('jobCancelBatch', operator, [{ batchId: 'C' }], { cancelled: 0, cancelRequested: 0 }, T0 + 5)], false);
    expect(other.report().violations).toBe(1);
  });

  it('counts onSuccess cancelled by the store while no job had failed', () => {
    const oracle = judge([...enqueueBatch('B', ['a', 'b'], { onSuccess: 's' }), ...start('a', T0), ...end('a', 'succeeded', T0 + 10, [skip('s', T0 + 10)])], false);
    expect(oracle.report()).toMatchObject({ violations: 1, examples: ['onSuccess s of batch B was cancelled while b was scheduled, and no operator cancelled it'] });
  });

  it('holds a plain on_failure dependant to onFailure’s rules, also when its parents ended before it was written', () => {
    const parents = [write(undefined, due('p'), T0), write(undefined, due('q'), T0), call('jobEnqueueMany', producer, [{ id: 'p', dependsOn: [] }, { id: 'q', dependsOn: [] }], [{ id: 'p', created: true }, { id: 'q', created: true }], T0)];
    const ran = judge([...parents, ...enqueueWatcher('w', ['p', 'q']), ...start('p', T0), ...start('q', T0), ...end('p', 'succeeded', T0 + 10), ...end('q', 'dead_lettered', T0 + 20, [release('w', T0 + 20)]), ...start('w', T0 + 30)]);
    expect(ran.report().violations).toBe(0);
    expect(ran.watchersRun).toBe(1);
    const succeeded = judge([...parents, ...enqueueWatcher('w', ['p', 'q']), ...start('p', T0), ...start('q', T0), ...end('p', 'succeeded', T0 + 10), ...end('q', 'succeeded', T0 + 20, [release('w', T0 + 20)]), ...start('w', T0 + 30)]);
    expect(succeeded.report()).toMatchObject({ violations: 1, examples: ['on_failure dependant w started attempt 1 though every job it waits for succeeded (succeeded×2)'] });
    // Written after both parents ended: cancelled at the insert when both succeeded, due when one did not.
    const late = [...parents, ...start('p', T0), ...start('q', T0), ...end('p', 'succeeded', T0 + 10)];
    const skipped = judge([...late, ...end('q', 'succeeded', T0 + 20), ...enqueueWatcher('w', ['p', 'q'], 'cancelled', T0 + 30)]);
    expect(skipped.report().violations).toBe(0);
    expect(skipped.watchersSkipped).toBe(1);
    const wrong = judge([...late, ...end('q', 'dead_lettered', T0 + 20), ...enqueueWatcher('w', ['p', 'q'], 'cancelled', T0 + 30)]);
    expect(wrong.report()).toMatchObject({ violations: 1, examples: ['on_failure dependant w was cancelled though a job it waits for did not succeed (succeeded×1 dead_lettered×1), and no operator cancelled it'] });
    const dueAtInsert = judge([...late, ...end('q', 'dead_lettered', T0 + 20), ...enqueueWatcher('w', ['p', 'q'], 'scheduled', T0 + 30), ...start('w', T0 + 40)]);
    expect(dueAtInsert.report().violations).toBe(0);
    // A failure replayed before the dependant was written settles nothing: the end after the replay does.
    const replayed = [...late, ...end('q', 'dead_lettered', T0 + 20), write(ended('q', 'dead_lettered'), due('q', { attempt: 0 }), T0 + 25), call('jobReplay', operator, [{ jobId: 'q' }], null, T0 + 25), ...enqueueWatcher('w', ['p', 'q'], 'awaiting_parents', T0 + 30), ...start('q', T0 + 40)];
    expect(judge([...replayed, ...end('q', 'succeeded', T0 + 50, [skip('w', T0 + 50)])]).report().violations).toBe(0);
    expect(judge([...replayed, ...end('q', 'succeeded', T0 + 50, [release('w', T0 + 50)]), ...start('w', T0 + 60)]).report().violations).toBe(1);
  });

  it('counts, at the end, a callback whose jobs all ended that never ran though it should have, or that still waits', () => {
    const batch = [...enqueueBatch('B', ['a'], { onSuccess: 's', onComplete: 'c', onFailure: 'f' }), ...start('a', T0)];
    // The store lost the latch: nothing was released or cancelled when a succeeded.
    const stuck = judge([...batch, ...end('a', 'succeeded', T0 + 10)]);
    expect(stuck.report()).toMatchObject({
      violations: 3,
      examples: [
        'onSuccess s of batch B still waits though every job it waits for succeeded (succeeded×1)',
        'onComplete c of batch B still waits though every job it waits for ended (succeeded×1)',
        'onFailure f of batch B still waits though every job it waits for succeeded (succeeded×1)',
      ],
    });
    // Released when it must not run: due at the end, though never claimed.
    const loose = judge([...batch, ...end('a', 'succeeded', T0 + 10, [release('s', T0 + 10), release('c', T0 + 10), release('f', T0 + 10)]), ...start('s', T0 + 20), ...start('c', T0 + 20)]);
    expect(loose.report()).toMatchObject({ violations: 1, examples: ['onFailure f of batch B is scheduled though every job it waits for succeeded (succeeded×1)'] });
    // Released but never claimed by the end of a run that drained: it should have run. In a run that
    // did not drain, that is the liveness oracle's to count.
    const unclaimed = [...batch, ...end('a', 'succeeded', T0 + 10, [release('s', T0 + 10), release('c', T0 + 10), skip('f', T0 + 10)]), ...start('s', T0 + 20)];
    expect(judge(unclaimed).report()).toMatchObject({ violations: 1, examples: ['onComplete c of batch B never ran though every job it waits for ended (succeeded×1); it is scheduled'] });
    const undrained = judge(unclaimed, false);
    undrained.finish({ ...END, drained: false });
    expect(undrained.report().violations).toBe(0);
    // A batch still running is not judged, nor a callback an operator cancelled, nor one counted already.
    expect(judge(batch).report().violations).toBe(0);
    expect(judge([...batch, ...cancel('c', T0 + 5), ...end('a', 'succeeded', T0 + 10, [release('s', T0 + 10), skip('f', T0 + 10)]), ...start('s', T0 + 20)]).report().violations).toBe(0);
    expect(judge([...batch, ...end('a', 'succeeded', T0 + 10, [release('s', T0 + 10), skip('c', T0 + 10), skip('f', T0 + 10)]), ...start('s', T0 + 20)]).report().violations).toBe(1);
  });

  it('checks every batch summary the operator reads against the rows', () => {
    const batch = [...enqueueBatch('B', ['a', 'b'], { onComplete: 'c' }), ...start('a', T0), ...end('a', 'dead_lettered', T0 + 10, [lower('c', T0 + 10)])];
    const summary = { id: 'B', total: 2, pending: 1, succeeded: 0, failed: 1, cancelled: 0, ended: false, callbacks: [{ kind: 'complete', jobId: 'c', state: 'awaiting_parents' }] };
    const read = (said: object) => call('jobListBatches', operator, [{ limit: 200 }], [said], T0 + 20);
    expect(judge([...batch, read(summary), call('jobBatch', operator, [{ batchId: 'B' }], summary, T0 + 20)], false).report().violations).toBe(0);
    const wrong = judge([...batch, read({ ...summary, pending: 0, ended: true, callbacks: [{ kind: 'complete', jobId: 'c', state: 'scheduled' }] })], false);
    expect(wrong.report()).toMatchObject({ violations: 1, examples: ['jobListBatches said batch B has pending 0, ended true, callbacks complete:scheduled; it has pending 1, ended false, callbacks complete:awaiting_parents'] });
    expect(judge([...batch, read({ ...summary, id: 'Z' })], false).report()).toMatchObject({ violations: 1, examples: ['jobListBatches listed batch Z, which no enqueue wrote'] });
  });
});

/**
 * Drives the store at random through the gateway, as the simulator does (batches of one to four jobs
 * with a random set of callbacks, on_failure dependants of one to three plain jobs, written with
 * them or later, claims, every outcome, lapsed leases, cancels of a job or a whole batch, replays,
 * batch reads), and after every call compares the oracle's view with the store's: a callback or
 * on_failure dependant that no operator cancelled waits (awaiting_parents) exactly while the oracle
 * says its jobs' ends are not all in, is cancelled unrun exactly when the oracle says it must not
 * run, and has been released otherwise.
 */
async function walk(seed: number, lifecycle?: LifecycleRules): Promise<{ oracle: BatchOracle; mismatches: string[] }> {
  const r = new SeededRandom(BigInt(seed));
  const scheduler = new VirtualScheduler(T0);
  const oracle = new BatchOracle();
  const log = new EventLog([oracle]);
  const store = new MemoryJobStore({ clock: scheduler, probe: StoreGateway.probe(log, scheduler), ...(lifecycle ? { lifecycle } : {}) });
  const gateway = new StoreGateway(store, log, scheduler, new BatchIds(store, new SeededRandom(BigInt(seed) + 1000n)));
  const w: Caller = { kind: 'worker', workerId: 'w' };
  const pick = <T>(items: readonly T[]): T | undefined => (items.length === 0 ? undefined : items[r.nextInt(items.length)]);
  const rows = (test: (row: JobRow) => boolean) => store.rows().filter(test);
  const waiter = (row: JobRow) => row.batchCallback !== null || row.dependencyMode === 'on_failure';
  const touched = new Set<string>();
  const job = (): EnqueueInput => ({ name: 'n', payload: null, maxAttempts: 2 });
  const mismatches: string[] = [];
  for (let step = 0; step < 200; step++) {
    const roll = r.next();
    if (roll < 0.12) {
      const set = 1 + r.nextInt(7);
      const callbacks = { ...(set & 1 ? { onSuccess: job() } : {}), ...(set & 2 ? { onComplete: job() } : {}), ...(set & 4 ? { onFailure: job() } : {}) };
      await gateway.execute({ kind: 'producer' }, 'jobEnqueueBatch', [{ jobs: Array.from({ length: 1 + r.nextInt(4) }, job), ...callbacks }]);
    } else if (roll < 0.18) {
      // Plain parents with their dependant, or a dependant of a job written earlier, which may have ended.
      const parents = Array.from({ length: 1 + r.nextInt(3) }, () => ({ ...job(), id: simUuid(r) }));
      const old = pick(rows((row) => row.batchId === null && row.dependencyMode === null));
      const dependsOn = r.next() < 0.5 || old === undefined ? parents.map((p) => p.id) : [old.id];
      const dependant = { ...job(), id: simUuid(r), dependsOn, dependencyMode: 'on_failure' as const };
      await gateway.execute({ kind: 'producer' }, 'jobEnqueueMany', [{ jobs: [...parents, dependant] }]);
    } else if (roll < 0.4) {
      await gateway.execute(w, 'jobClaim', [{ workerId: 'w', limit: 1 + r.nextInt(3), queues: ['default'], leaseMs: 1_000 }]);
    } else if (roll < 0.68) {
      const running = pick(rows((row) => row.state === 'running' && row.leasedUntil! > scheduler.now()));
      if (running === undefined) continue;
      const kind = pick(['succeeded', 'succeeded', 'succeeded', 'failed', 'dead_lettered', 'quarantined'] as const)!;
      const outcome = { jobId: running.id, attempt: running.attempt, kind, error: 'broken', retryDelayMs: 0, reason: 'broken' } as Outcome;
      await gateway.execute(w, 'jobCompleteMany', [{ workerId: 'w', outcomes: [outcome] }]);
    } else if (roll < 0.76) {
      // A job of a batch or a plain parent, now and then a callback or a dependant itself.
      const target = pick(rows((row) => !TERMINAL.has(row.state) && (r.next() < 0.2 || !waiter(row))));
      if (target === undefined) continue;
      if (waiter(target)) touched.add(target.id);
      await gateway.execute({ kind: 'operator' }, 'jobCancel', [{ jobId: target.id }]);
    } else if (roll < 0.8) {
      const batch = pick([...new Set(rows((row) => row.batchId !== null && !TERMINAL.has(row.state)).map((row) => row.batchId!))]);
      if (batch === undefined) continue;
      for (const row of rows((row) => row.batchId === batch && row.batchCallback !== null)) touched.add(row.id);
      await gateway.execute({ kind: 'operator' }, 'jobCancelBatch', [{ batchId: batch }]);
    } else if (roll < 0.88) {
      const failed = pick(rows((row) => isDeadLetterState(row.state)));
      if (failed) await gateway.execute({ kind: 'operator' }, 'jobReplay', [{ jobId: failed.id }]);
    } else if (roll < 0.93) {
      const batch = pick(rows((row) => row.batchId !== null));
      await gateway.execute({ kind: 'operator' }, r.next() < 0.5 || batch === undefined ? 'jobListBatches' : 'jobBatch', [batch === undefined ? { limit: 200 } : { batchId: batch.batchId }]);
    } else {
      await scheduler.run(scheduler.now() + r.nextInt(1_500));
      await gateway.execute(w, 'jobExpireLeases', [{ limit: 100 }]);
    }
    for (const row of rows((row) => waiter(row) && !touched.has(row.id))) {
      const expected = oracle.expected(row.id);
      const state = row.state === 'awaiting_parents' ? 'waits' : row.state === 'cancelled' && row.attempt === 0 ? 'skipped' : 'runs';
      if (expected !== state) mismatches.push(`seed ${seed} step ${step}: ${row.batchCallback ?? row.dependencyMode} ${row.id} is ${row.state}, the oracle expects it ${expected}`);
    }
  }
  oracle.finish({ now: scheduler.now(), rows: [], drained: false });
  return { oracle, mismatches };
}

describe('batch callbacks oracle against the in-memory store', () => {
  it('expects of each callback exactly what the store does, and counts nothing the store does', async () => {
    const seen = { callbacksRun: 0, callbacksSkipped: 0, watchersRun: 0, watchersSkipped: 0, batchCancels: 0 };
    const mismatches: string[] = [];
    for (let seed = 1; seed <= 40; seed++) {
      const { oracle, mismatches: found } = await walk(seed);
      expect({ seed, report: oracle.report() }).toEqual({ seed, report: { name: 'batch_callbacks', violations: 0, examples: [] } });
      mismatches.push(...found);
      for (const key of Object.keys(seen) as (keyof typeof seen)[]) seen[key] += oracle[key];
    }
    expect(mismatches.slice(0, 5)).toEqual([]);
    // The walk reached every situation the oracle counts.
    expect(Object.entries(seen).filter(([, n]) => n === 0)).toEqual([]);
  });

  it.each(MUTANTS.filter((m) => m.caughtBy === 'batch_callbacks').map((m) => [m.name, m] as const))('counts what %s breaks in the same walk', async (_name, mutant) => {
    let violations = 0;
    for (let seed = 1; seed <= 10; seed++) violations += (await walk(seed, mutant.rules)).oracle.report().violations;
    expect(violations).toBeGreaterThan(0);
  });
});
