import { expect, it } from '@jest/globals';
import { SeededRandom, type JobState } from '../../../core/index.js';
import type { HistoryEntry, JobStore } from '../../../store/index.js';
import { ObserverDispatcher, type TransitionEvent, type TransitionObserver } from '../../../worker/index.js';
import type { StoreUnderTest, SuiteContext } from '../harness.js';
import { claimOne, enqueue, expectRefused, LEASE_MS, mustGet } from './helpers.js';

/** Succeeds one claimed job and returns the store's answer. */
async function succeed(store: JobStore, job: { id: string; attempt: number }, workerId = 'w', output?: unknown) {
  const [result] = await store.jobCompleteMany({ workerId, outcomes: [{ jobId: job.id, attempt: job.attempt, kind: 'succeeded', ...(output === undefined ? {} : { output }) }] });
  return result!;
}

/** Every entry of the log that names `jobId`, read the way observers read it. */
async function logged(store: JobStore, jobId: string) {
  return (await store.historyRead({ limit: 10_000 })).filter((entry) => entry.jobId === jobId);
}

/**
 * The log from `after` once `ready` accepts it. On PostgreSQL the log holds back entries behind any
 * transaction still open on the server (delivery-order.sql.ts), so on a server with other work
 * the entries just written may take a moment to be deliverable; elsewhere the first read does.
 */
async function logOnce(store: JobStore, after: string | undefined, ready: (log: HistoryEntry[]) => boolean) {
  for (let tries = 0; ; tries++) {
    const log = await store.historyRead({ ...(after === undefined ? {} : { after }), limit: 10_000 });
    if (ready(log) || tries === 200) return log;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The job reads as a job that never existed: no row, no status, no history, nothing in the log. */
async function expectGone(h: StoreUnderTest, jobId: string): Promise<void> {
  expect(await h.store.jobGet({ jobId })).toBeNull();
  expect(await h.store.jobStatusMany({ jobIds: [jobId] })).toEqual([]);
  expect(await h.store.jobHistory({ jobId })).toEqual([]);
  expect(await logged(h.store, jobId)).toEqual([]);
}

/** The job is kept as under `keep`: succeeded, with its whole history, the success last. */
async function expectKeptSucceeded(h: StoreUnderTest, jobId: string): Promise<void> {
  expect((await mustGet(h.store, jobId)).state).toBe('succeeded');
  const history = await h.store.jobHistory({ jobId });
  expect(history.map((entry) => entry.state)).toEqual(['scheduled', 'running', 'succeeded']);
}

/** Stored counts per state over every queue, as jobStats reports them. */
async function countsByState(store: JobStore): Promise<Partial<Record<JobState, number>>> {
  const counts: Partial<Record<JobState, number>> = {};
  for (const { state, count } of (await store.jobStats()).counts) counts[state] = (counts[state] ?? 0) + count;
  return counts;
}

/**
 * The `lean` finish (docs/stores.md#lean-finish): a success that nothing needs is deleted inside its
 * fenced outcome write, with its history; everything else is what `keep` does.
 */
export function leanFinishCases(ctx: SuiteContext): void {
  it('issue 36 item 4: a store reports its finish mode: keep unless opened lean', async () => {
    expect((await ctx.open()).store.finish).toBe('keep');
    expect((await ctx.open({ finish: 'lean' })).store.finish).toBe('lean');
  });

  it('issue 36 item 4: under keep a success without output is kept, with its history', async () => {
    const h = await ctx.open();
    const id = await enqueue(h.store, { name: 'report.send' });
    expect(await succeed(h.store, await claimOne(h.store, 'w'))).toEqual({ jobId: id, attempt: 1, status: 'applied', state: 'succeeded' });
    await expectKeptSucceeded(h, id);
  });

  it('issue 36 item 4: under lean a success without output, dependants, unique key or observer is deleted with its history, and reads as an unknown job', async () => {
    const h = await ctx.open({ finish: 'lean' });
    const id = await enqueue(h.store, { name: 'report.send' });
    const nulled = await enqueue(h.store, { name: 'report.send' });
    const other = await enqueue(h.store, { name: 'report.send' });
    const [a, b] = await h.store.jobClaim({ workerId: 'w', limit: 2, queues: ['default'], leaseMs: LEASE_MS });
    expect((await h.store.jobHistory({ jobId: id })).map((entry) => entry.state)).toEqual(['scheduled', 'running']);
    // The answer is the one keep gives: the outcome applied, and the job succeeded.
    expect(await succeed(h.store, a!)).toEqual({ jobId: id, attempt: 1, status: 'applied', state: 'succeeded' });
    // An output of JSON null is no output.
    expect(await succeed(h.store, b!, 'w', null)).toEqual({ jobId: nulled, attempt: 1, status: 'applied', state: 'succeeded' });
    await expectGone(h, id);
    await expectGone(h, nulled);
    expect(await h.countJobs()).toBe(1);
    expect((await mustGet(h.store, other)).state).toBe('scheduled');
  });

  it('issue 36 item 4: under lean a success with output, a dependant or a unique key is kept as under keep', async () => {
    const h = await ctx.open({ finish: 'lean' });
    const withOutput = await enqueue(h.store, { name: 'report.build' });
    const parent = await enqueue(h.store, { name: 'report.build' });
    const unique = await enqueue(h.store, { name: 'report.build', uniqueKey: 'daily' });
    const child = await enqueue(h.store, { name: 'report.mail', dependsOn: [parent] });
    const claimed = await h.store.jobClaim({ workerId: 'w', limit: 3, queues: ['default'], leaseMs: LEASE_MS });
    expect(claimed.map((job) => job.id).sort()).toEqual([withOutput, parent, unique].sort());
    const byId = new Map(claimed.map((job) => [job.id, job]));
    await succeed(h.store, byId.get(withOutput)!, 'w', { rows: 3 });
    await succeed(h.store, byId.get(parent)!);
    await succeed(h.store, byId.get(unique)!);
    await expectKeptSucceeded(h, withOutput);
    expect((await mustGet(h.store, withOutput)).output).toEqual({ rows: 3 });
    await expectKeptSucceeded(h, parent);
    await expectKeptSucceeded(h, unique);
    // The dependant was released by its parent's success.
    expect((await mustGet(h.store, child)).state).toBe('scheduled');

    // The dependant itself needs nothing once it succeeds: it goes, with its own edge to the parent.
    await succeed(h.store, await claimOne(h.store, 'w'));
    await expectGone(h, child);
    const edges = await h.store.jobEdges({ jobId: parent });
    expect(edges?.dependants).toEqual([]);
  });

  it('issue 36 item 4: under lean a dependant named after its parent was deleted is refused, as for a parent that never existed, and nothing is written', async () => {
    const h = await ctx.open({ finish: 'lean' });
    const parent = await enqueue(h.store, { name: 'parent' });
    await succeed(h.store, await claimOne(h.store, 'w'));
    await expectGone(h, parent);
    const before = await h.snapshot();
    await expectRefused(() => enqueue(h.store, { name: 'child', dependsOn: [parent] }), new RegExp(`depends on ${parent}, which does not exist\\.$`));
    expect(await h.snapshot()).toEqual(before);
  });

  it('issue 36 item 4: under lean a parent whose dependant was cancelled, its edge still open, is kept', async () => {
    const h = await ctx.open({ finish: 'lean' });
    const parent = await enqueue(h.store, { name: 'parent' });
    const child = await enqueue(h.store, { name: 'child', dependsOn: [parent] });
    await h.store.jobCancel({ jobId: child });
    expect((await mustGet(h.store, child)).state).toBe('cancelled');
    await succeed(h.store, await claimOne(h.store, 'w'));
    await expectKeptSucceeded(h, parent);
  });

  it('issue 36 item 4: under lean a job is kept while an observer would be fed its success or an entry it has not passed', async () => {
    const h = await ctx.open({ finish: 'lean' });
    const observe = async (observer: string, filter: { to?: JobState[]; jobs?: string[] }) => {
      const lease = await h.store.observerLease({ observer, workerId: 'o', leaseMs: LEASE_MS, ...filter });
      expect(lease).not.toBeNull();
      return lease!;
    };
    // Observers that do not need report.send: dead letters only, and successes of another job.
    await observe('dead-letters', { to: ['dead_lettered'] });
    await observe('other-successes', { to: ['succeeded'], jobs: ['invoice.send'] });
    const free = await enqueue(h.store, { name: 'report.send' });
    await succeed(h.store, await claimOne(h.store, 'w'));
    await expectGone(h, free);

    // An observer of report.send's successes keeps them.
    await observe('report-successes', { to: ['succeeded', 'dead_lettered'], jobs: ['report.send', 'invoice.send'] });
    const heard = await enqueue(h.store, { name: 'report.send' });
    await succeed(h.store, await claimOne(h.store, 'w'));
    await expectKeptSucceeded(h, heard);
  });

  it('issue 36 item 4: under lean an observer dispatcher records its observers\' filters, so a dead-letter alert lets successes go and an observer of successes keeps and is fed them', async () => {
    const h = await ctx.open({ finish: 'lean' });
    const fed: TransitionEvent[] = [];
    const dispatch = (observers: TransitionObserver[]) =>
      new ObserverDispatcher({
        store: h.store,
        observers,
        timers: { setTimeout: () => 0, clearTimeout: () => undefined },
        logger: { log: () => undefined, warn: () => undefined, error: () => undefined },
        random: new SeededRandom(7n),
        options: { workerId: 'node-o', pollIntervalMs: 1_000, leaseMs: LEASE_MS, batchSize: 100, retry: { baseDelayMs: 1_000, maxDelayMs: 60_000, jitter: false } },
      });
    await dispatch([{ id: 'alerts', to: ['dead_lettered'], deliver: (event) => void fed.push(event) }]).register();
    const free = await enqueue(h.store, { name: 'report.send' });
    await succeed(h.store, await claimOne(h.store, 'w'));
    await expectGone(h, free);

    const successes = dispatch([{ id: 'successes', to: ['succeeded'], jobs: ['report.send'], deliver: (event) => void fed.push(event) }]);
    await successes.register();
    const heard = await enqueue(h.store, { name: 'report.send' });
    await succeed(h.store, await claimOne(h.store, 'w'));
    await expectKeptSucceeded(h, heard);
    const unheard = await enqueue(h.store, { name: 'invoice.send' });
    await succeed(h.store, await claimOne(h.store, 'w'));
    await expectGone(h, unheard);
    await logOnce(h.store, undefined, (log) => log.some((entry) => entry.jobId === heard && entry.state === 'succeeded'));
    expect(await successes.runOnce()).toBe(1);
    expect(fed.map((event) => [event.jobId, event.state])).toEqual([[heard, 'succeeded']]);
  });

  it('issue 36 item 4: under lean an observer of starts keeps a job until it has passed its entries', async () => {
    const h = await ctx.open({ finish: 'lean' });
    const starts = await h.store.observerLease({ observer: 'starts', workerId: 'o', leaseMs: LEASE_MS, to: ['running'] });
    expect(starts).not.toBeNull();
    const behind = await enqueue(h.store, { name: 'report.send' });
    await succeed(h.store, await claimOne(h.store, 'w'));
    // Its running entry was not fed yet: the job stays, and the observer is fed it.
    await expectKeptSucceeded(h, behind);

    const caughtUp = await enqueue(h.store, { name: 'report.send' });
    const job = await claimOne(h.store, 'w');
    const fedTo = (log: HistoryEntry[]) => log.filter((entry) => entry.jobId === caughtUp).map((entry) => entry.state);
    const log = await logOnce(h.store, starts!.position, (entries) => fedTo(entries).length === 2);
    expect(fedTo(log)).toEqual(['scheduled', 'running']);
    expect(await h.store.observerCommit({ observer: 'starts', workerId: 'o', position: log.at(-1)!.position })).toBe(true);
    await succeed(h.store, job);
    await expectGone(h, caughtUp);
  });

  it('issue 36 item 4: observerLease refuses a filter that is not job states or wire names, before writing anything', async () => {
    const h = await ctx.open({ finish: 'lean' });
    const before = await h.snapshot();
    const lease = (filter: object) => () => h.store.observerLease({ observer: 'o', workerId: 'w', leaseMs: LEASE_MS, ...filter });
    await expectRefused(lease({ to: ['succeeded', 'done'] }), /^to\[1\] must be a job state \(scheduled, awaiting_parents, .*\), got "done"\.$/);
    await expectRefused(lease({ to: [] }), /^to must be a list of 1 to 7 job states, got an empty list\.$/);
    await expectRefused(lease({ to: 'succeeded' }), /^to must be a list of 1 to 7 job states, got "succeeded"\.$/);
    await expectRefused(lease({ to: ['succeeded'], jobs: ['report send'] }), /^jobs\[0\] must be 1 to \d+ characters of letters, digits/);
    await expectRefused(lease({ to: ['succeeded'], jobs: [] }), /^jobs must be a list of 1 to 1000 wire names, got an empty list\.$/);
    expect(await h.snapshot()).toEqual(before);
  });

  it('issue 36 item 4: under lean a cursor that records no filter (leased by an earlier release) keeps every success', async () => {
    const h = await ctx.open({ finish: 'lean' });
    await h.store.observerLease({ observer: 'unfiltered', workerId: 'o', leaseMs: LEASE_MS });
    const id = await enqueue(h.store, { name: 'report.send' });
    await succeed(h.store, await claimOne(h.store, 'w'));
    await expectKeptSucceeded(h, id);
  });

  it('issue 36 item 4: under lean failures, retries, dead letters, quarantines and cancels are kept as under keep; a retried job that succeeds goes with its failures', async () => {
    const h = await ctx.open({ finish: 'lean' });
    const retried = await enqueue(h.store, { name: 'flaky', maxAttempts: 3 });
    const dead = await enqueue(h.store, { name: 'doomed', maxAttempts: 1 });
    const odd = await enqueue(h.store, { name: 'odd' });
    const cancelled = await enqueue(h.store, { name: 'stopped' });
    await h.store.jobClaim({ workerId: 'w', limit: 4, queues: ['default'], leaseMs: LEASE_MS });
    await h.store.jobCancel({ jobId: cancelled });
    const results = await h.store.jobCompleteMany({
      workerId: 'w',
      outcomes: [
        { jobId: retried, attempt: 1, kind: 'failed', error: 'timeout', retryDelayMs: 0 },
        { jobId: dead, attempt: 1, kind: 'failed', error: 'broken', retryDelayMs: 0 },
        { jobId: odd, attempt: 1, kind: 'quarantined', reason: 'no decoder' },
        { jobId: cancelled, attempt: 1, kind: 'failed', error: 'aborted', retryDelayMs: 0 },
      ],
    });
    expect(results.map((r) => r.status === 'applied' && r.state)).toEqual(['scheduled', 'dead_lettered', 'quarantined', 'cancelled']);
    for (const [id, state] of [
      [retried, 'scheduled'],
      [dead, 'dead_lettered'],
      [odd, 'quarantined'],
      [cancelled, 'cancelled'],
    ] as const) {
      expect((await mustGet(h.store, id)).state).toBe(state);
      expect((await h.store.jobHistory({ jobId: id })).at(-1)!.state).toBe(state);
    }
    expect((await h.store.jobHistory({ jobId: retried })).map((e) => [e.state, e.error])).toEqual([
      ['scheduled', null],
      ['running', null],
      ['scheduled', 'timeout'],
    ]);
    // Its next attempt succeeds: the job and every entry it had, its failure's included, go.
    await succeed(h.store, await claimOne(h.store, 'w'));
    await expectGone(h, retried);
  });

  it.each(['off', 'transitions'] as const)('issue 36 item 4: under lean with historyPolicy %s a success nothing needs is deleted and a failure kept', async (historyPolicy) => {
    const h = await ctx.open({ finish: 'lean', historyPolicy });
    const done = await enqueue(h.store, { name: 'report.send' });
    const failed = await enqueue(h.store, { name: 'report.send', maxAttempts: 1 });
    await h.store.jobClaim({ workerId: 'w', limit: 2, queues: ['default'], leaseMs: LEASE_MS });
    await h.store.jobCompleteMany({
      workerId: 'w',
      outcomes: [
        { jobId: done, attempt: 1, kind: 'succeeded' },
        { jobId: failed, attempt: 1, kind: 'failed', error: 'x', retryDelayMs: 0 },
      ],
    });
    await expectGone(h, done);
    expect((await mustGet(h.store, failed)).state).toBe('dead_lettered');
    expect((await h.store.jobHistory({ jobId: failed })).map((entry) => entry.state)).toEqual(historyPolicy === 'off' ? [] : ['scheduled', 'running', 'dead_lettered']);
  });

  it('issue 36 item 4: under lean a stale success deletes nothing and comes back stale', async () => {
    const h = await ctx.open({ finish: 'lean' });
    const id = await enqueue(h.store, { name: 'report.send' });
    const job = await claimOne(h.store, 'w');
    const before = await h.snapshot();
    // Another worker, a wrong attempt, and the right lease after it lapsed.
    expect(await succeed(h.store, job, 'intruder')).toEqual({ jobId: id, attempt: 1, status: 'stale' });
    expect(await succeed(h.store, { id, attempt: 2 })).toEqual({ jobId: id, attempt: 2, status: 'stale' });
    expect(await h.snapshot()).toEqual(before);
    await h.advance(LEASE_MS);
    expect(await succeed(h.store, job)).toEqual({ jobId: id, attempt: 1, status: 'stale' });
    expect((await mustGet(h.store, id)).state).toBe('running');
    expect((await h.store.jobHistory({ jobId: id })).map((entry) => entry.state)).toEqual(['scheduled', 'running']);
    // The next claim's success is the live lease's: that one applies, and the job goes.
    const again = await claimOne(h.store, 'w2');
    expect(await succeed(h.store, again, 'w2')).toEqual({ jobId: id, attempt: 2, status: 'applied', state: 'succeeded' });
    await expectGone(h, id);
  });

  it('issue 36 item 4: under lean the counts leave a deleted success out, as they leave out any deleted job, and stay exact', async () => {
    const h = await ctx.open({ finish: 'lean' });
    const lean = await enqueue(h.store, { name: 'a' });
    const kept = await enqueue(h.store, { name: 'b' });
    await enqueue(h.store, { name: 'c', maxAttempts: 1 });
    await enqueue(h.store, { name: 'd' });
    const claimed = await h.store.jobClaim({ workerId: 'w', limit: 3, queues: ['default'], leaseMs: LEASE_MS });
    expect(await countsByState(h.store)).toEqual({ running: 3, scheduled: 1 });
    const byName = new Map(claimed.map((job) => [job.name, job]));
    await h.store.jobCompleteMany({
      workerId: 'w',
      outcomes: [
        { jobId: lean, attempt: 1, kind: 'succeeded' },
        { jobId: kept, attempt: 1, kind: 'succeeded', output: 'done' },
        { jobId: byName.get('c')!.id, attempt: 1, kind: 'failed', error: 'x', retryDelayMs: 0 },
      ],
    });
    const expected = { succeeded: 1, dead_lettered: 1, scheduled: 1 };
    expect(await countsByState(h.store)).toEqual(expected);
    expect(await h.countJobs()).toBe(3);
    while ((await h.store.jobCountsFold({ limit: 100_000 })) > 0);
    expect(await countsByState(h.store)).toEqual(expected);
    expect((await h.store.jobCountTotals()).counts).toMatchObject(expected);
    expect((await h.store.jobCountTotals()).counts.running ?? 0).toBe(0);
  });

  it('issue 36 item 4: under lean a success written by an attempt transaction deletes the job too, and a stale one rolls back and deletes nothing', async () => {
    const h = await ctx.open({ finish: 'lean' });
    if (!h.store.capabilities.attemptTransactions) {
      expect(() => h.store.beginAttempt()).toThrow();
      return;
    }
    const id = await enqueue(h.store, { name: 'report.send' });
    const withOutput = await enqueue(h.store, { name: 'report.send' });
    const stale = await enqueue(h.store, { name: 'report.send' });
    const claimed = await h.store.jobClaim({ workerId: 'w', limit: 3, queues: ['default'], leaseMs: LEASE_MS });
    const byId = new Map(claimed.map((job) => [job.id, job]));
    const commit = async (jobId: string, workerId: string, output: unknown) => {
      const tx = h.store.beginAttempt();
      await tx.run(() => tx.manager.query('SELECT 1'));
      return tx.commitSuccess(workerId, jobId, byId.get(jobId)!.attempt, output);
    };
    expect(await commit(id, 'w', undefined)).toEqual({ jobId: id, attempt: 1, status: 'applied', state: 'succeeded' });
    await expectGone(h, id);
    expect(await commit(withOutput, 'w', { sent: true })).toEqual({ jobId: withOutput, attempt: 1, status: 'applied', state: 'succeeded' });
    await expectKeptSucceeded(h, withOutput);
    expect(await commit(stale, 'intruder', undefined)).toEqual({ jobId: stale, attempt: 1, status: 'stale' });
    expect((await mustGet(h.store, stale)).state).toBe('running');
  });

  it('issue 36 item 4: a node\'s registry row records the finish mode of the store its beats go through', async () => {
    const beat = { host: 'h', pid: 1, version: '1.0.0', queues: ['default'], concurrency: 4, running: 0 };
    const lean = await ctx.open({ finish: 'lean' });
    await lean.store.nodeBeat({ id: 'lean-node', ...beat });
    expect((await lean.store.nodeList()).map((node) => [node.id, node.finish])).toEqual([['lean-node', 'lean']]);
    const keep = await ctx.open();
    await keep.store.nodeBeat({ id: 'keep-node', ...beat });
    expect((await keep.store.nodeList()).map((node) => [node.id, node.finish])).toEqual([['keep-node', 'keep']]);
  });
}
