import { describe, expect, it } from '@jest/globals';
import type { CompleteParams, JobStore, Outcome, OutcomeResult } from '../../lib/store/index.js';
import { Completer } from '../../lib/worker/index.js';
import { ManualTimers, settle } from '../support/manual-timers.js';

/** A store whose outcome writes the test settles one by one: each call waits for `fail()` or `succeed()`. */
class WriteGate {
  readonly calls: CompleteParams[] = [];
  private waiting: Array<{ resolve: (results: OutcomeResult[]) => void; reject: (error: Error) => void; params: CompleteParams }> = [];

  readonly store = {
    jobCompleteMany: (params: CompleteParams) => {
      this.calls.push(params);
      return new Promise<OutcomeResult[]>((resolve, reject) => this.waiting.push({ resolve, reject, params }));
    },
  } as unknown as JobStore;

  fail(): void {
    this.waiting.shift()!.reject(new Error('connection terminated'));
  }

  succeed(): void {
    const { resolve, params } = this.waiting.shift()!;
    resolve(params.outcomes.map((o) => ({ jobId: o.jobId, attempt: o.attempt, status: 'applied', state: 'succeeded' })));
  }
}

function setup() {
  const timers = new ManualTimers();
  const gate = new WriteGate();
  const settled: Array<{ jobId: string; result: OutcomeResult | 'dropped' }> = [];
  const completer = new Completer({
    store: gate.store,
    workerId: 'w1',
    logger: { log() {}, warn() {}, error() {} },
    timers,
    stillHeld: () => true,
    onSettled: (outcome, result) => settled.push({ jobId: outcome.jobId, result }),
  });
  return { timers, gate, settled, completer };
}

const outcome = (jobId: string): Outcome => ({ jobId, attempt: 1, kind: 'succeeded' });

describe('Completer after close', () => {
  it('issue 19 workerfix 1: a failed write waiting for its retry is never retried once closed', async () => {
    const { timers, gate, settled, completer } = setup();
    completer.submit(outcome('a'));
    await settle();
    expect(gate.calls).toHaveLength(1);
    gate.fail();
    await settle();
    completer.close();
    await timers.advance(600_000);
    expect(gate.calls).toHaveLength(1);
    expect(settled).toEqual([{ jobId: 'a', result: 'dropped' }]);
  });

  it('issue 19 workerfix 1: a write in flight at close that then fails is dropped, not retried', async () => {
    const { timers, gate, settled, completer } = setup();
    completer.submit(outcome('a'));
    await settle();
    expect(gate.calls).toHaveLength(1);
    completer.close();
    gate.fail();
    await timers.advance(600_000);
    expect(gate.calls).toHaveLength(1);
    expect(settled).toEqual([{ jobId: 'a', result: 'dropped' }]);
    await expect(completer.idle()).resolves.toBeUndefined();
  });

  it('issue 19 workerfix 1: a write in flight at close that succeeds is reported; nothing queued behind it is written', async () => {
    const { timers, gate, settled, completer } = setup();
    completer.submit(outcome('a'));
    await settle();
    completer.submit(outcome('b'));
    completer.close();
    gate.succeed();
    await timers.advance(600_000);
    expect(gate.calls.map((c) => c.outcomes.map((o) => o.jobId))).toEqual([['a']]);
    expect(settled).toEqual([
      { jobId: 'b', result: 'dropped' },
      { jobId: 'a', result: { jobId: 'a', attempt: 1, status: 'applied', state: 'succeeded' } },
    ]);
  });

  it('issue 19 workerfix 1: an outcome submitted after close is dropped and never written', async () => {
    const { timers, gate, settled, completer } = setup();
    completer.close();
    completer.submit(outcome('late'));
    await timers.advance(600_000);
    expect(gate.calls).toHaveLength(0);
    expect(settled).toEqual([{ jobId: 'late', result: 'dropped' }]);
  });
});

describe('Completer lending outcomes to a claim (issue 36 item 2)', () => {
  it('lends nothing while no write of its own is in flight: those outcomes go out at once in their own write, beside the claim', async () => {
    const { gate, settled, completer } = setup();
    completer.submit(outcome('a'));
    completer.submit(outcome('b'));
    expect(completer.take()).toEqual([]);
    await settle();
    expect(gate.calls.map((c) => c.outcomes.map((o) => o.jobId))).toEqual([['a', 'b']]);
    gate.succeed();
    await settle();
    expect(settled.map((s) => s.jobId)).toEqual(['a', 'b']);
  });

  it('lends every waiting outcome when asked for all, with no write of its own in flight, and writes none of them itself', async () => {
    const { gate, settled, completer } = setup();
    completer.submit(outcome('a'));
    completer.submit(outcome('b'));
    const lent = completer.take(true);
    expect(lent.map((o) => o.jobId)).toEqual(['a', 'b']);
    await settle();
    expect(gate.calls).toHaveLength(0);
    completer.settle(lent, lent.map((o) => ({ jobId: o.jobId, attempt: 1, status: 'applied', state: 'succeeded' })));
    expect(settled.map((s) => s.jobId)).toEqual(['a', 'b']);
  });

  it('hands a claim the outcomes waiting behind its write in flight, and settles them from the claim\'s write', async () => {
    const { gate, settled, completer } = setup();
    completer.submit(outcome('a'));
    await settle();
    expect(gate.calls).toHaveLength(1);
    completer.submit(outcome('b'));
    completer.submit(outcome('c'));
    const lent = completer.take();
    expect(lent.map((o) => o.jobId)).toEqual(['b', 'c']);
    gate.succeed();
    await settle();
    // Lent before its write came back: nothing is written twice.
    expect(gate.calls.map((c) => c.outcomes.map((o) => o.jobId))).toEqual([['a']]);
    let idle = false;
    void completer.idle().then(() => (idle = true));
    await settle();
    expect(idle).toBe(false);
    completer.settle(lent, [
      { jobId: 'b', attempt: 1, status: 'applied', state: 'succeeded' },
      { jobId: 'c', attempt: 1, status: 'stale' },
    ]);
    await settle();
    expect(idle).toBe(true);
    expect(settled).toEqual([
      { jobId: 'a', result: { jobId: 'a', attempt: 1, status: 'applied', state: 'succeeded' } },
      { jobId: 'b', result: { jobId: 'b', attempt: 1, status: 'applied', state: 'succeeded' } },
      { jobId: 'c', result: { jobId: 'c', attempt: 1, status: 'stale' } },
    ]);
  });

  it('writes outcomes a failed claim gave back with the retry of its own failed write, after the backoff, and lends none while that retry waits', async () => {
    const { timers, gate, settled, completer } = setup();
    completer.submit(outcome('a'));
    await settle();
    completer.submit(outcome('b'));
    const lent = completer.take();
    expect(lent.map((o) => o.jobId)).toEqual(['b']);
    completer.giveBack(lent, new Error('connection terminated'));
    gate.fail();
    await settle();
    completer.submit(outcome('c'));
    expect(completer.take()).toEqual([]);
    await settle();
    expect(gate.calls).toHaveLength(1);
    // Two failures, the claim's and its own: the retry waits 50 ms × 2².
    await timers.advance(199);
    expect(gate.calls).toHaveLength(1);
    await timers.advance(1);
    expect(gate.calls.map((c) => c.outcomes.map((o) => o.jobId).sort())).toEqual([['a'], ['a', 'b', 'c']]);
    gate.succeed();
    await settle();
    expect(settled.map((s) => s.jobId).sort()).toEqual(['a', 'b', 'c']);
  });

  it('writes outcomes a failed claim gave back after its own write ended on their own, after the backoff', async () => {
    const { timers, gate, settled, completer } = setup();
    completer.submit(outcome('a'));
    await settle();
    completer.submit(outcome('b'));
    const lent = completer.take();
    gate.succeed();
    await settle();
    completer.giveBack(lent, new Error('connection terminated'));
    expect(completer.take()).toEqual([]);
    await timers.advance(99);
    expect(gate.calls).toHaveLength(1);
    await timers.advance(1);
    expect(gate.calls.map((c) => c.outcomes.map((o) => o.jobId))).toEqual([['a'], ['b']]);
    gate.succeed();
    await settle();
    expect(settled.map((s) => s.jobId)).toEqual(['a', 'b']);
  });

  it('writes outcomes a failed claim gave back while its own write was in flight right after that write, once it succeeded', async () => {
    const { gate, settled, completer } = setup();
    completer.submit(outcome('a'));
    await settle();
    completer.submit(outcome('b'));
    completer.giveBack(completer.take(), new Error('connection terminated'));
    gate.succeed();
    await settle();
    expect(gate.calls.map((c) => c.outcomes.map((o) => o.jobId))).toEqual([['a'], ['b']]);
    gate.succeed();
    await settle();
    expect(settled.map((s) => s.jobId)).toEqual(['a', 'b']);
  });

  it('drops outcomes whose claim was refused as bad input: retrying cannot fix them', async () => {
    const { timers, gate, settled, completer } = setup();
    const { InvalidArgumentError } = await import('../../lib/core/index.js');
    completer.submit(outcome('a'));
    await settle();
    completer.submit(outcome('b'));
    completer.giveBack(completer.take(), new InvalidArgumentError('output is too large.', 'output'));
    gate.succeed();
    await timers.advance(600_000);
    expect(gate.calls.map((c) => c.outcomes.map((o) => o.jobId))).toEqual([['a']]);
    expect(settled).toEqual([
      { jobId: 'b', result: 'dropped' },
      { jobId: 'a', result: { jobId: 'a', attempt: 1, status: 'applied', state: 'succeeded' } },
    ]);
  });
});
