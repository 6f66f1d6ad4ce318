import { describe, expect, it } from '@jest/globals';
import {
  AttemptBudgetOracle,
  ConcurrencyLimitOracle,
  DependencyOrderOracle,
  EffectsOnceOracle,
  LivenessOracle,
  LostJobOracle,
  OccurrenceOracle,
  OutcomeProvenanceOracle,
  PriorityOrderOracle,
  ProgressProvenanceOracle,
  RateLimitOracle,
  SingleLeaseOracle,
  SnoozeOracle,
  TerminalStateOracle,
  UniqueKeyOracle,
  WindowOracle,
  type Oracle,
} from '../../lib/simulator/index.js';
import { OccurrenceId, SeededRandom } from '../../lib/core/index.js';
import { freeStarts, newRateWindow, resizeRateWindow, useStart, type RateWindow } from '../../lib/store/rate-window.js';
import { call, complete, feed, row, running, T0, worker, write } from './history-builder.js';
import type { SimEvent } from '../../lib/simulator/index.js';

function violations(oracle: Oracle, events: readonly SimEvent[], end?: Parameters<Oracle['finish']>[0]): number {
  feed(oracle, events);
  if (end) oracle.finish(end);
  return oracle.report().violations;
}

const succeeded = (overrides = {}) => row({ state: 'succeeded', attempt: 1, ...overrides });
const log = (jobId: string, state: string, attempt: number, error: string | null = null): SimEvent => ({ type: 'log', at: T0, jobId, state: state as never, attempt, error });

describe('outcome provenance oracle', () => {
  it('accepts an outcome from the live lease of that attempt', () => {
    expect(violations(new OutcomeProvenanceOracle(), [write(running(), succeeded()), complete('w1', 'job-1', 1)])).toBe(0);
  });

  it('counts an outcome applied from another worker', () => {
    const oracle = new OutcomeProvenanceOracle();
    expect(violations(oracle, [write(running({ workerId: 'w2' }), succeeded()), complete('w1', 'job-1', 1)])).toBe(1);
    expect(oracle.report().examples[0]).toMatch(/live lease was w2/);
  });

  it('counts an outcome for a stale attempt, one after the lease lapsed, and one on a job that was not running', () => {
    expect(violations(new OutcomeProvenanceOracle(), [write(running({ attempt: 2 }), succeeded()), complete('w1', 'job-1', 1)])).toBe(1);
    expect(violations(new OutcomeProvenanceOracle(), [write(running({ leasedUntil: T0 }), succeeded()), complete('w1', 'job-1', 1)])).toBe(1);
    expect(violations(new OutcomeProvenanceOracle(), [write(row({ state: 'scheduled', attempt: 1 }), succeeded()), complete('w1', 'job-1', 1)])).toBe(1);
  });

  it('lets a claim or the sweep end an attempt only after its lease lapsed', () => {
    const reclaim = (leasedUntil: number) => [write(running({ leasedUntil }), running({ attempt: 2, workerId: 'w2' })), call('jobClaim', worker('w2'), [{}], [])];
    expect(violations(new OutcomeProvenanceOracle(), reclaim(T0))).toBe(0);
    expect(violations(new OutcomeProvenanceOracle(), reclaim(T0 + 1))).toBe(1);
    expect(violations(new OutcomeProvenanceOracle(), [write(running(), row({ state: 'dead_lettered', attempt: 1 })), call('jobCancel', { kind: 'operator' }, [{ jobId: 'job-1' }])])).toBe(1);
  });
});

describe('progress provenance oracle', () => {
  const value = (workerId: string, attempt: number) => ({ workerId, attempt, step: 'started' });
  const beat = (workerId: string, attempt: number, progress?: unknown, at = T0) =>
    call('jobHeartbeat', worker(workerId), [{ workerId, leases: [{ jobId: 'job-1', attempt, ...(progress === undefined ? {} : { progress }) }], leaseMs: 5_000 }], null, at);
  const landed = (progress: unknown, before = running()) => write(before, { ...before, leasedUntil: T0 + 10_000, progress: JSON.stringify(progress) });

  it("accepts progress written under the reporter's live lease, and a renewal that leaves progress alone", () => {
    expect(violations(new ProgressProvenanceOracle(), [landed(value('w1', 1)), beat('w1', 1, value('w1', 1))])).toBe(0);
    expect(violations(new ProgressProvenanceOracle(), [write(running(), running({ leasedUntil: T0 + 10_000 })), beat('w1', 1)])).toBe(0);
  });

  it("counts a stale worker's progress that landed: another worker's lease, another attempt, a lapsed lease, an ended job", () => {
    const oracle = new ProgressProvenanceOracle();
    expect(violations(oracle, [landed(value('w1', 1), running({ workerId: 'w2', attempt: 2 })), beat('w1', 1, value('w1', 1))])).toBe(1);
    expect(oracle.report().examples[0]).toMatch(/landed on job-1, whose lease was w2 attempt 2/);
    expect(violations(new ProgressProvenanceOracle(), [landed(value('w1', 1), running({ attempt: 2 })), beat('w1', 1, value('w1', 1))])).toBe(1);
    expect(violations(new ProgressProvenanceOracle(), [landed(value('w1', 1), running({ leasedUntil: T0 })), beat('w1', 1, value('w1', 1))])).toBe(1);
    expect(violations(new ProgressProvenanceOracle(), [landed(value('w1', 1), succeeded({ workerId: 'w1' })), beat('w1', 1, value('w1', 1))])).toBe(1);
  });

  it('counts progress changed by anything but the heartbeat that carried it, or to a value it did not carry', () => {
    expect(violations(new ProgressProvenanceOracle(), [landed(value('w1', 1)), complete('w1', 'job-1', 1)])).toBe(1);
    expect(violations(new ProgressProvenanceOracle(), [landed(value('w1', 1)), beat('w1', 1)])).toBe(1);
    expect(violations(new ProgressProvenanceOracle(), [landed(value('w1', 1)), beat('w1', 1, value('w1', 2))])).toBe(1);
    // The value names another attempt than the lease it was written under.
    expect(violations(new ProgressProvenanceOracle(), [landed(value('w9', 1)), beat('w1', 1, value('w9', 1))])).toBe(1);
  });
});

describe('lost job oracle', () => {
  it('counts an acknowledged job that was never written or is gone at the end', () => {
    const end = (ids: string[]) => ({ now: T0, drained: true, rows: ids.map((id) => row({ id })) });
    expect(violations(new LostJobOracle(), [write(undefined, row()), { type: 'ack', at: T0, ids: ['job-1'] }], end(['job-1']))).toBe(0);
    expect(violations(new LostJobOracle(), [{ type: 'ack', at: T0, ids: ['job-1'] }], end(['job-1']))).toBe(1);
    expect(violations(new LostJobOracle(), [write(undefined, row()), { type: 'ack', at: T0, ids: ['job-1'] }], end([]))).toBe(1);
  });
});

describe('terminal state oracle', () => {
  it('allows only an operator replay of a dead-lettered or quarantined job', () => {
    const dead = row({ state: 'dead_lettered', attempt: 3 });
    expect(violations(new TerminalStateOracle(), [write(dead, row()), call('jobReplay', { kind: 'operator' }, [{ jobId: 'job-1' }])])).toBe(0);
    expect(violations(new TerminalStateOracle(), [write(succeeded(), running({ attempt: 2 })), call('jobClaim', worker('w1'), [{}], [])])).toBe(1);
    expect(violations(new TerminalStateOracle(), [write(succeeded(), row()), call('jobReplay', { kind: 'operator' }, [{ jobId: 'job-1' }])])).toBe(1);
  });

  it('allows an operator to discard a dead letter as cancelled, keeping its attempt, and nothing else', () => {
    const dead = row({ state: 'dead_lettered', attempt: 3 });
    const cancel = call('jobCancel', { kind: 'operator' }, [{ jobId: 'job-1' }]);
    expect(violations(new TerminalStateOracle(), [write(dead, row({ state: 'cancelled', attempt: 3 })), cancel])).toBe(0);
    expect(violations(new TerminalStateOracle(), [write(dead, row({ state: 'cancelled', attempt: 0 })), cancel])).toBe(1);
    expect(violations(new TerminalStateOracle(), [write(succeeded(), row({ state: 'cancelled' })), cancel])).toBe(1);
  });
});

describe('single live lease oracle', () => {
  const claim = (w: string, attempt: number, at: number, leasedUntil: number) => call('jobClaim', worker(w), [{}], [{ jobId: 'job-1', attempt, leasedUntil }], at);
  const renew = (w: string, attempt: number, at: number) => call('jobHeartbeat', worker(w), [{}], { renewed: [{ jobId: 'job-1', attempt, leasedUntil: at + 5_000 }], lost: [] }, at);

  it('accepts a reclaim after the lease lapsed and renewals by the holder', () => {
    expect(violations(new SingleLeaseOracle(), [claim('w1', 1, T0, T0 + 5_000), renew('w1', 1, T0 + 1_000), claim('w2', 2, T0 + 6_001, T0 + 11_001)])).toBe(0);
  });

  it('counts a second lease while the first is live', () => {
    expect(violations(new SingleLeaseOracle(), [claim('w1', 1, T0, T0 + 5_000), claim('w2', 2, T0 + 1_000, T0 + 6_000)])).toBe(1);
  });

  it('counts a renewal for a worker that does not hold the lease, and one after it lapsed', () => {
    expect(violations(new SingleLeaseOracle(), [claim('w1', 1, T0, T0 + 5_000), claim('w2', 2, T0 + 5_000, T0 + 10_000), renew('w1', 1, T0 + 6_000)])).toBe(1);
    expect(violations(new SingleLeaseOracle(), [claim('w1', 1, T0, T0 + 5_000), renew('w1', 1, T0 + 5_000)])).toBe(1);
  });
});

describe('attempt budget oracle', () => {
  it('counts a write past maxAttempts', () => {
    expect(violations(new AttemptBudgetOracle(), [write(row(), running({ attempt: 3 }))])).toBe(0);
    expect(violations(new AttemptBudgetOracle(), [write(running({ attempt: 3 }), running({ attempt: 4 }))])).toBe(1);
  });
});

describe('snooze oracle (issue 39 item 5)', () => {
  const enqueued = write(undefined, row({ maxAttempts: 3 }));
  const snoozeCall = (delayMs: number) =>
    call('jobCompleteMany', worker('w1'), { workerId: 'w1', outcomes: [{ jobId: 'job-1', attempt: 1, kind: 'snoozed', delayMs }] }, [{ jobId: 'job-1', attempt: 1, status: 'applied', state: 'scheduled' }]);
  const enqueueCall = call('jobEnqueueMany', { kind: 'producer' }, []);
  const claimed = [write(row({ maxAttempts: 3 }), running({ maxAttempts: 3 })), call('jobClaim', worker('w1'), {})];

  it('accepts a snooze that keeps the attempt, grows the budget by one, clears the error and waits exactly its delay', () => {
    const snoozed = row({ attempt: 1, maxAttempts: 4, snoozes: 1, runAt: T0 + 700 });
    expect(violations(new SnoozeOracle(), [enqueued, enqueueCall, ...claimed, write(running({ maxAttempts: 3 }), snoozed), snoozeCall(700)])).toBe(0);
  });

  it('accepts a snooze of a cancel-requested job that cancels it with the budget as it was', () => {
    const was = running({ maxAttempts: 3, cancelRequested: true });
    expect(violations(new SnoozeOracle(), [enqueued, enqueueCall, write(row({ maxAttempts: 3 }), was), call('jobClaim', worker('w1'), {}), write(was, row({ state: 'cancelled', attempt: 1, maxAttempts: 3 })), snoozeCall(0)])).toBe(0);
  });

  it('counts a snooze that spends the budget, keeps an error, or makes the job due at another time', () => {
    const spent = row({ attempt: 1, maxAttempts: 3, snoozes: 1, runAt: T0 + 700 });
    expect(violations(new SnoozeOracle(), [enqueued, enqueueCall, ...claimed, write(running({ maxAttempts: 3 }), spent), snoozeCall(700)])).toBe(2);
    const erred = row({ attempt: 1, maxAttempts: 4, snoozes: 1, runAt: T0 + 700, lastError: 'old' });
    expect(violations(new SnoozeOracle(), [enqueued, enqueueCall, ...claimed, write(running({ maxAttempts: 3 }), erred), snoozeCall(700)])).toBe(1);
    const early = row({ attempt: 1, maxAttempts: 4, snoozes: 1, runAt: T0 });
    expect(violations(new SnoozeOracle(), [enqueued, enqueueCall, ...claimed, write(running({ maxAttempts: 3 }), early), snoozeCall(700)])).toBe(1);
  });

  it('counts a job that snoozed more often than its handler allows', () => {
    expect(violations(new SnoozeOracle(), [write(undefined, row({ maxAttempts: 8, snoozes: 5 })), enqueueCall])).toBe(1);
  });
});

describe('effects once oracle', () => {
  const slot = (jobId: string, op: 'take' | 'release'): SimEvent => ({ type: 'slot', at: T0, jobId, op });
  const edge = (parentId: string, childId: string): SimEvent => ({ type: 'edge', at: T0, parentId, childId });
  const child = (overrides = {}) => row({ id: 'child', state: 'awaiting_parents', pendingParents: 1, ...overrides });

  it('accepts one history entry per transition, a settled edge per lowered latch, and slots held while running', () => {
    const events: SimEvent[] = [
      write(undefined, child()),
      log('child', 'awaiting_parents', 0),
      call('jobEnqueueMany', { kind: 'producer' }, []),
      write(row(), running()),
      log('job-1', 'running', 1),
      slot('job-1', 'take'),
      call('jobClaim', worker('w1'), [{}], []),
      write(running(), succeeded()),
      log('job-1', 'succeeded', 1),
      slot('job-1', 'release'),
      edge('job-1', 'child'),
      write(child(), child({ pendingParents: 0 })),
      write(child({ pendingParents: 0 }), child({ state: 'scheduled', pendingParents: 0 })),
      log('child', 'scheduled', 0),
      complete('w1', 'job-1', 1),
    ];
    expect(violations(new EffectsOnceOracle(), events)).toBe(0);
  });

  it('counts a missing or duplicated history entry', () => {
    expect(violations(new EffectsOnceOracle(), [write(running(), succeeded()), complete('w1', 'job-1', 1)])).toBe(1);
    expect(violations(new EffectsOnceOracle(), [write(running(), succeeded()), log('job-1', 'succeeded', 1), log('job-1', 'succeeded', 1), complete('w1', 'job-1', 1)])).toBe(1);
  });

  it('issue 19 item 5: counts a failure logged without the error that ended its attempt', () => {
    const failed = row({ attempt: 2, lastError: 'card declined' });
    const report = call('jobCompleteMany', worker('w1'), []);
    const repeated = running({ attempt: 2, lastError: 'card declined' });
    expect(violations(new EffectsOnceOracle(), [write(repeated, failed), log('job-1', 'scheduled', 2, 'card declined'), report])).toBe(0);
    expect(violations(new EffectsOnceOracle(), [write(repeated, failed), log('job-1', 'scheduled', 2, null), report])).toBe(1);
    const dead = row({ state: 'dead_lettered', attempt: 2, lastError: 'lease expired' });
    expect(violations(new EffectsOnceOracle(), [write(running({ attempt: 2, lastError: 'lease expired' }), dead), log('job-1', 'dead_lettered', 2), report])).toBe(1);
  });

  it('counts an edge settled twice or by a parent that is not terminal, and a latch lowered without an edge', () => {
    expect(violations(new EffectsOnceOracle(), [write(undefined, succeeded()), log('job-1', 'succeeded', 1), edge('job-1', 'child'), edge('job-1', 'child'), call('x', worker('w1'), [])])).toBe(1);
    expect(violations(new EffectsOnceOracle(), [write(undefined, row()), log('job-1', 'scheduled', 0), edge('job-1', 'child'), call('x', worker('w1'), [])])).toBe(1);
    expect(violations(new EffectsOnceOracle(), [write(child(), child({ pendingParents: 0 })), call('x', worker('w1'), [])])).toBe(1);
  });

  it('counts a slot given back while the job runs, never given back, or released twice', () => {
    const claimed = [write(row(), running()), log('job-1', 'running', 1), slot('job-1', 'take'), call('jobClaim', worker('w1'), [])];
    expect(violations(new EffectsOnceOracle(), [...claimed, slot('job-1', 'release'), call('jobHeartbeat', worker('w1'), [])])).toBe(1);
    expect(violations(new EffectsOnceOracle(), [...claimed, write(running(), succeeded()), log('job-1', 'succeeded', 1), complete('w1', 'job-1', 1)])).toBe(1);
    expect(violations(new EffectsOnceOracle(), [slot('job-1', 'release'), call('x', worker('w1'), [])])).toBe(1);
  });
});

describe('concurrency limit oracle', () => {
  const keyed = (id: string) => running({ id, concurrencyKey: 'tenant', workerId: id });
  it('counts live leases over a key cap after a claim, and saturations at the cap', () => {
    const oracle = new ConcurrencyLimitOracle(new Map([['tenant', 1]]));
    feed(oracle, [write(row({ id: 'a' }), keyed('a')), call('jobClaim', worker('a'), [{}], [])]);
    expect(oracle.report().violations).toBe(0);
    expect(oracle.saturations).toBe(1);
    feed(oracle, [write(row({ id: 'b' }), keyed('b')), call('jobClaim', worker('b'), [{}], [])]);
    expect(oracle.report().violations).toBe(1);
  });

  it('does not count a lapsed lease', () => {
    const oracle = new ConcurrencyLimitOracle(new Map([['tenant', 1]]));
    feed(oracle, [write(row({ id: 'a' }), { ...keyed('a'), leasedUntil: T0 }), write(row({ id: 'b' }), keyed('b')), call('jobClaim', worker('b'), [{}], [])]);
    expect(oracle.report().violations).toBe(0);
  });

  // Issue 19 item 2: the cap follows the operator's changes and the jobs' declarations.
  const setCap = (max: number | null) => call('concurrencyLimitSet', { kind: 'operator' }, [{ target: { key: 'tenant' }, max }]);
  const start = (id: string) => [write(row({ id }), keyed(id)), call('jobClaim', worker(id), [{}], [])];
  const finish = (id: string) => write(keyed(id), row({ id, state: 'succeeded', attempt: 1, concurrencyKey: 'tenant' }));

  it('lets the jobs running when a cap is lowered run on above it, and counts any job started while still above it', () => {
    const oracle = new ConcurrencyLimitOracle(new Map([['tenant', 3]]));
    feed(oracle, [...start('a'), ...start('b'), ...start('c'), setCap(1), call('jobClaim', worker('x'), [{}], [])]);
    expect(oracle.report().violations).toBe(0);
    expect(oracle.changesWhileRunning).toBe(1);
    // a finishes; b and c still run against a cap of 1, so d starting is over the cap.
    feed(oracle, [finish('a'), ...start('d')]);
    expect(oracle.report().violations).toBe(1);
  });

  it('counts jobs started over a cap raised while more ran than it allows', () => {
    const oracle = new ConcurrencyLimitOracle(new Map([['tenant', 3]]));
    feed(oracle, [...start('a'), ...start('b'), ...start('c'), setCap(1), setCap(2), call('jobClaim', worker('x'), [{}], [])]);
    expect(oracle.report().violations).toBe(0);
    feed(oracle, [finish('a'), ...start('d')]);
    expect(oracle.report().violations).toBe(1);
  });

  it('judges nothing while a cap is removed, and counts the jobs started then against a cap set again', () => {
    const oracle = new ConcurrencyLimitOracle(new Map([['tenant', 1]]));
    feed(oracle, [...start('a'), setCap(null), ...start('b'), ...start('c')]);
    expect(oracle.report().violations).toBe(0);
    feed(oracle, [setCap(2), call('jobClaim', worker('x'), [{}], []), finish('a'), ...start('d')]);
    expect(oracle.report().violations).toBe(1);
  });

  it('takes a cap declared by a stored job while the key has none, the first declaration standing', () => {
    const enqueue = (id: string, concurrencyLimit: number, created = true) =>
      call('jobEnqueueMany', { kind: 'producer' }, [{ id, dependsOn: [], dependencyMode: 'on_success', concurrencyKey: 'tenant', concurrencyLimit }], [{ id, created }]);
    const oracle = new ConcurrencyLimitOracle(new Map());
    feed(oracle, [...start('a'), ...start('b'), enqueue('late', 1, false), call('jobClaim', worker('x'), [{}], [])]);
    expect(oracle.report().violations).toBe(0);
    feed(oracle, [enqueue('first', 1), enqueue('second', 5), call('jobClaim', worker('x'), [{}], [])]);
    expect(oracle.report().violations).toBe(0);
    feed(oracle, [finish('a'), ...start('c')]);
    expect(oracle.report().violations).toBe(1);
  });
});

describe('dependency order oracle', () => {
  const enqueue = (mode: string) => call('jobEnqueueMany', { kind: 'producer' }, [{ id: 'child', dependsOn: ['job-1'], dependencyMode: mode, concurrencyKey: null }]);
  const release = write(row({ id: 'child', state: 'awaiting_parents' }), row({ id: 'child' }));

  it('accepts a release after the parent succeeded', () => {
    expect(violations(new DependencyOrderOracle(), [enqueue('on_success'), write(running(), succeeded()), release])).toBe(0);
  });

  it('counts a release or first claim before the parents finished, or after a failure waiting on_success', () => {
    expect(violations(new DependencyOrderOracle(), [enqueue('on_success'), write(row(), running()), release])).toBe(1);
    expect(violations(new DependencyOrderOracle(), [enqueue('on_any_terminal'), write(row(), running()), write(row({ id: 'child' }), running({ id: 'child' }))])).toBe(1);
    expect(violations(new DependencyOrderOracle(), [enqueue('on_success'), write(running(), row({ state: 'dead_lettered', attempt: 1 })), release])).toBe(1);
    expect(violations(new DependencyOrderOracle(), [enqueue('on_any_terminal'), write(running(), row({ state: 'dead_lettered', attempt: 1 })), release])).toBe(0);
  });
});

describe('occurrence oracle', () => {
  const scheduleId = '0195f4c2-7c4b-7a41-9d2e-3b1c5a6f7e80';
  const minted = (id: string, at = T0) => write(undefined, row({ id, scheduleId, scheduledFor: at }));
  const occurrence = (at = T0) => OccurrenceId.derive(scheduleId, new Date(at));

  it('accepts one job per occurrence, with the occurrence id', () => {
    expect(violations(new OccurrenceOracle(), [minted(occurrence()), minted(occurrence(T0 + 1_000), T0 + 1_000)])).toBe(0);
  });

  it('counts a second job for one occurrence and a job whose id is not the occurrence id', () => {
    expect(violations(new OccurrenceOracle(), [minted(occurrence()), minted('other-id')])).toBe(2);
  });
});

describe('liveness oracle', () => {
  it('counts every job left unfinished when the run did not drain', () => {
    expect(violations(new LivenessOracle(), [], { now: T0, drained: true, rows: [succeeded()] })).toBe(0);
    expect(violations(new LivenessOracle(), [], { now: T0, drained: false, rows: [succeeded({ id: 'a' }), running({ id: 'b' }), row({ id: 'c' })] })).toBe(2);
  });
});

describe('issue 19 item 9: unique key oracle', () => {
  const keyed = (id: string, overrides = {}) => row({ id, uniqueKey: 'k', ...overrides });

  it('accepts a key that passes from a finished holder to a new job, and a holder that runs and is rewritten', () => {
    const events = [
      write(undefined, keyed('a')),
      write(keyed('a'), keyed('a', { runAt: T0 + 5_000 })),
      write(keyed('a'), running({ id: 'a', uniqueKey: 'k' })),
      write(running({ id: 'a', uniqueKey: 'k' }), succeeded({ id: 'a', uniqueKey: 'k' })),
      write(undefined, keyed('b')),
      write(undefined, keyed('c', { name: 'other.job' })),
      write(undefined, row({ id: 'd' })),
    ];
    expect(violations(new UniqueKeyOracle(), events)).toBe(0);
  });

  it('counts a second unfinished holder, whether inserted or brought back by a replay', () => {
    expect(violations(new UniqueKeyOracle(), [write(undefined, keyed('a')), write(undefined, keyed('b'))])).toBe(1);
    const replayed = [
      write(undefined, keyed('a', { state: 'dead_lettered', attempt: 1 })),
      write(undefined, keyed('b')),
      write(keyed('a', { state: 'dead_lettered', attempt: 1 }), keyed('a')),
    ];
    expect(violations(new UniqueKeyOracle(), replayed)).toBe(1);
  });
});

describe('windows oracle (debounce and throttle)', () => {
  const producer = { kind: 'producer' } as const;
  /** The gateway logs a windowed input with its wire name, which scopes the window; `row()`'s is sim.work. */
  const named = (input: object) => ('debounce' in input || 'throttle' in input ? { name: 'sim.work', ...input } : input);
  const enqueue = (inputs: readonly object[], results: readonly object[], at = T0) => call('jobEnqueueMany', producer, inputs.map(named), results, at);
  const exec = (workerId: string, jobId: string, attempt: number, from: string, at = T0): SimEvent => ({ type: 'exec', at, workerId, jobId, attempt, phase: 'start', from });

  describe('throttle', () => {
    const throttle = { key: 'k', windowMs: 1_000 };
    /** A job that opened the throttle window of key k at `opened`. */
    const opener = (id: string, opened = T0, key = 'k') => row({ id, window: { kind: 'throttle', key, endsAt: opened + 1_000 } });
    const open = (id: string, at = T0, key = 'k') => [write(undefined, opener(id, at, key), at), enqueue([{ id, throttle: { ...throttle, key } }], [{ id, created: true }], at)];
    const throttledBy = (id: string, openerId: string, at: number) => enqueue([{ id, throttle }], [{ id: openerId, created: false, deduplicated: 'throttled' }], at);

    it('accepts enqueues throttled while the window is open, and a new window once it closed', () => {
      const oracle = new WindowOracle();
      expect(violations(oracle, [...open('a'), throttledBy('x', 'a', T0 + 999), ...open('b', T0 + 1_000), throttledBy('y', 'b', T0 + 1_500)])).toBe(0);
      expect(oracle.throttleWindowsReopened).toBe(1);
    });

    it('counts a job that opened a window while an earlier one of its key was open', () => {
      expect(violations(new WindowOracle(), [...open('a'), ...open('b', T0 + 999)])).toBe(1);
      // Another key, or another kind of window under the same key, is another window.
      expect(violations(new WindowOracle(), [...open('a'), ...open('b', T0 + 10, 'other')])).toBe(0);
    });

    it('counts a throttled answer that names a closed window or a window of another key, or that wrote a job', () => {
      expect(violations(new WindowOracle(), [...open('a'), throttledBy('x', 'a', T0 + 1_000)])).toBe(1);
      expect(violations(new WindowOracle(), [...open('a', T0, 'other'), throttledBy('x', 'a', T0 + 10)])).toBe(1);
      expect(violations(new WindowOracle(), [...open('a'), write(undefined, row({ id: 'x' }), T0 + 10), throttledBy('x', 'a', T0 + 10)])).toBe(1);
      // A window is per wire name: an enqueue of another name throttled by it is a violation.
      const otherName = enqueue([{ id: 'x', name: 'other.job', throttle }], [{ id: 'a', created: false, deduplicated: 'throttled' }], T0 + 10);
      expect(violations(new WindowOracle(), [...open('a'), otherName])).toBe(1);
    });

    it('counts a window that does not end its windowMs after the insert', () => {
      expect(violations(new WindowOracle(), [write(undefined, opener('a', T0 + 5)), enqueue([{ id: 'a', throttle }], [{ id: 'a', created: true }])])).toBe(1);
    });
  });

  describe('debounce', () => {
    const debounce = { key: 'k', windowMs: 500, maxDelayMs: 1_500 };
    /** A debounced job of key k first enqueued at T0, not started, due at `runAt`. */
    const waiting = (id: string, runAt: number, overrides = {}) => row({ id, runAt, scheduledFor: runAt, window: { kind: 'debounce', key: 'k', endsAt: T0 + 1_500 }, ...overrides });
    const first = [write(undefined, waiting('a', T0 + 500)), enqueue([{ id: 'a', debounce }], [{ id: 'a', created: true }])];
    /** Enqueue `id` debounced into a at `at`, which moves a from `from` to `to`. */
    const push = (id: string, at: number, from: number, to: number, into = 'a') => [
      write(waiting(into, from), waiting(into, to), at),
      enqueue([{ id, debounce }], [{ id: into, created: false, deduplicated: 'debounced' }], at),
    ];
    const claim = (from: string, at = T0 + 1_500) => [
      write(waiting('a', T0 + 1_500), running({ id: 'a', runAt: T0 + 1_500, window: { kind: 'debounce', key: 'k', endsAt: T0 + 1_500 } }), at),
      call('jobClaim', worker('w1'), {}, [{ jobId: 'a', attempt: 1, leasedUntil: at + 5_000, from }], at),
    ];

    it('accepts pushes a window from each enqueue, capped at the window end, and a claim and run with the last payload', () => {
      const oracle = new WindowOracle();
      const events = [
        ...first,
        ...push('x', T0 + 400, T0 + 500, T0 + 900),
        ...push('y', T0 + 1_200, T0 + 900, T0 + 1_500),
        ...claim('y'),
        exec('w1', 'a', 1, 'y', T0 + 1_500),
        // Once a has started, the key's next enqueue writes a job of its own.
        write(undefined, waiting('b', T0 + 2_100, { window: { kind: 'debounce', key: 'k', endsAt: T0 + 3_100 } }), T0 + 1_600),
        enqueue([{ id: 'b', debounce }], [{ id: 'b', created: true }], T0 + 1_600),
      ];
      expect(violations(oracle, events)).toBe(0);
      expect(oracle.debouncesCapped).toBe(1);
    });

    it('accepts a window that ends ten windows after the insert when maxDelayMs is left out', () => {
      const job = row({ id: 'a', runAt: T0 + 500, window: { kind: 'debounce', key: 'k', endsAt: T0 + 5_000 } });
      expect(violations(new WindowOracle(), [write(undefined, job), enqueue([{ id: 'a', debounce: { key: 'k', windowMs: 500 } }], [{ id: 'a', created: true }])])).toBe(0);
      expect(violations(new WindowOracle(), [write(undefined, job), enqueue([{ id: 'a', debounce }], [{ id: 'a', created: true }])])).toBe(1);
    });

    it('counts a second job of the key that has not started, whether inserted or brought back by a replay', () => {
      expect(violations(new WindowOracle(), [...first, write(undefined, waiting('b', T0 + 500)), enqueue([{ id: 'b', debounce }], [{ id: 'b', created: true }])])).toBe(1);
      const dead = waiting('b', T0, { state: 'dead_lettered', attempt: 2 });
      const replay = (others: readonly SimEvent[]) => [write(undefined, dead), call('jobEnqueueMany', producer, [], []), ...others, write(dead, waiting('b', T0 + 9_000, { attempt: 0 })), call('jobReplay', { kind: 'operator' }, [{ jobId: 'b' }])];
      expect(violations(new WindowOracle(), replay(first))).toBe(1);
      // Alone under its key, the replayed job may be due at once, past its window's end.
      expect(violations(new WindowOracle(), replay([]))).toBe(0);
    });

    it('counts a push to another time than a window from now, or past the window end', () => {
      expect(violations(new WindowOracle(), [...first, ...push('x', T0 + 400, T0 + 500, T0 + 700)])).toBe(1);
      // Past the end: the run time set past it, and not the earlier of the two.
      expect(violations(new WindowOracle(), [...first, ...push('x', T0 + 1_200, T0 + 500, T0 + 1_700)])).toBe(2);
    });

    it('counts a debounce into a job that had started, that it did not write, or whose window is another key', () => {
      const started = running({ id: 'a', runAt: T0 + 900, window: { kind: 'debounce', key: 'k', endsAt: T0 + 1_500 } });
      expect(violations(new WindowOracle(), [write(started, started, T0 + 400), enqueue([{ id: 'x', debounce }], [{ id: 'a', created: false, deduplicated: 'debounced' }], T0 + 400)])).toBe(1);
      expect(violations(new WindowOracle(), [...first, enqueue([{ id: 'x', debounce }], [{ id: 'a', created: false, deduplicated: 'debounced' }], T0 + 400)])).toBe(1);
      expect(violations(new WindowOracle(), [...first, ...push('x', T0 + 400, T0 + 500, T0 + 900).slice(0, 1), enqueue([{ id: 'x', debounce: { ...debounce, key: 'other' } }], [{ id: 'a', created: false, deduplicated: 'debounced' }], T0 + 400)])).toBe(1);
    });

    it('counts a claim with the payload of an earlier enqueue, and a run with another payload than the claim handed over', () => {
      const pushed = [...first, ...push('x', T0 + 400, T0 + 500, T0 + 900), ...push('y', T0 + 1_200, T0 + 900, T0 + 1_500)];
      expect(violations(new WindowOracle(), [...pushed, ...claim('x')])).toBe(1);
      expect(violations(new WindowOracle(), [...pushed, ...claim('y'), exec('w1', 'a', 1, 'x', T0 + 1_500)])).toBe(1);
    });

    it('counts a window that changed after the insert', () => {
      expect(violations(new WindowOracle(), [...first, write(waiting('a', T0 + 500), waiting('a', T0 + 500, { window: { kind: 'debounce', key: 'k', endsAt: T0 + 1_501 } })), call('jobRunNow', { kind: 'operator' }, [])])).toBe(1);
    });
  });
});

describe('priority order oracle', () => {
  const claim = (at = T0) => call('jobClaim', worker('w1'), [{ workerId: 'w1', limit: 1, queues: ['default'], leaseMs: 5_000 }], [], at);
  const urgent = row({ id: 'urgent', priority: -2 });
  const later = row({ id: 'later', priority: 3 });

  it('accepts a claim that took the most urgent due job, and passes over future, keyed and other queues', () => {
    const oracle = new PriorityOrderOracle();
    const future = row({ id: 'future', priority: -9, runAt: T0 + 1 });
    const keyed = row({ id: 'keyed', priority: -9, concurrencyKey: 'tenant' });
    const elsewhere = row({ id: 'elsewhere', priority: -9, queue: 'other' });
    feed(oracle, [write(undefined, future), write(undefined, keyed), write(undefined, elsewhere), write(undefined, later), call('jobEnqueueMany', { kind: 'producer' }, []), write(urgent, running({ id: 'urgent', priority: -2 })), claim()]);
    expect(oracle.report().violations).toBe(0);
  });

  it('counts a claim that left a more urgent due job behind', () => {
    const oracle = new PriorityOrderOracle();
    feed(oracle, [write(undefined, urgent), write(undefined, later), call('jobEnqueueMany', { kind: 'producer' }, []), write(later, running({ id: 'later', priority: 3 })), claim()]);
    expect(oracle.report()).toMatchObject({ violations: 1, examples: [expect.stringContaining('left urgent of priority -2')] });
  });
});

describe('rate limit oracle', () => {
  const producer = { kind: 'producer' } as const;
  const operator = { kind: 'operator' } as const;
  /** A job of key `k` (and queue default) whose enqueue declared `rate`, and the store wrote it. */
  const declare = (id: string, rate: { max: number; perMs: number } | undefined, created = true, key = 'k') =>
    call('jobEnqueueMany', producer, [{ id, dependsOn: [], dependencyMode: 'on_success', concurrencyKey: key, concurrencyLimit: null, ...(rate ? { rateLimit: rate } : {}) }], [{ id, created }]);
  const setRate = (target: { key: string } | { queue: string }, rate: { max: number; perMs: number } | null, at = T0) => call('rateLimitSet', operator, [{ target, rate }], null, at);
  /** A claim at `at` that leased the job `id` (of key `k`, unless another is given). */
  const start = (id: string, at: number, overrides = {}) => [
    write(row({ id, concurrencyKey: 'k', ...overrides }), running({ id, concurrencyKey: 'k', leasedUntil: at + 5_000, ...overrides }), at),
    call('jobClaim', worker('w1'), [{}], [], at),
  ];

  it('accepts max starts in any window, counted from the declaring enqueue, and one more a whole window after the oldest', () => {
    const oracle = new RateLimitOracle();
    feed(oracle, [...start('before', T0), declare('a', { max: 2, perMs: 1_000 }), ...start('a', T0), ...start('b', T0 + 500), ...start('c', T0 + 1_000), ...start('d', T0 + 1_500)]);
    expect(oracle.report().violations).toBe(0);
    expect(oracle.saturations).toBe(3);
  });

  it('counts a start beyond max inside the window, a lapsed lease\'s reclaim included', () => {
    const oracle = new RateLimitOracle();
    const reclaim = [write(running({ id: 'a', concurrencyKey: 'k' }), running({ id: 'a', concurrencyKey: 'k', attempt: 2, workerId: 'w2', leasedUntil: T0 + 9_999 }), T0 + 999), call('jobClaim', worker('w2'), [{}], [], T0 + 999)];
    feed(oracle, [declare('a', { max: 1, perMs: 1_000 }), ...start('a', T0), ...reclaim]);
    expect(oracle.report()).toMatchObject({ violations: 1, examples: [expect.stringContaining('2 starts on key:k in the 1000 ms')] });
  });

  it('counts the starts of one claim together, and a queue target as a key', () => {
    const oracle = new RateLimitOracle();
    const other = { concurrencyKey: null };
    feed(oracle, [
      setRate({ queue: 'default' }, { max: 2, perMs: 1_000 }),
      write(row({ id: 'a', ...other }), running({ id: 'a', ...other }), T0),
      write(row({ id: 'b', ...other }), running({ id: 'b', ...other }), T0),
      write(row({ id: 'c', ...other }), running({ id: 'c', ...other }), T0),
      call('jobClaim', worker('w1'), [{}], [], T0),
    ]);
    expect(oracle.report()).toMatchObject({ violations: 1, examples: [expect.stringContaining('3 starts on queue:default')] });
  });

  it('lets the first declaration stand, ignores one the store did not write, and counts from an operator\'s set', () => {
    const first = new RateLimitOracle();
    feed(first, [declare('x', { max: 1, perMs: 1_000 }, false), declare('a', { max: 2, perMs: 1_000 }), declare('b', { max: 1, perMs: 1_000 }), ...start('a', T0), ...start('b', T0)]);
    expect(first.report().violations).toBe(0);
    const set = new RateLimitOracle();
    feed(set, [...start('a', T0), ...start('b', T0), setRate({ key: 'k' }, { max: 1, perMs: 1_000 }, T0), ...start('c', T0 + 1)]);
    expect(set.report().violations).toBe(0);
    feed(set, [...start('d', T0 + 2)]);
    expect(set.report().violations).toBe(1);
  });

  it('keeps counting the starts of a changed limit in its new window and max, and forgets them on a removal', () => {
    const lowered = new RateLimitOracle();
    feed(lowered, [setRate({ key: 'k' }, { max: 3, perMs: 1_000 }), ...start('a', T0), ...start('b', T0 + 100), ...start('c', T0 + 200), setRate({ key: 'k' }, { max: 2, perMs: 1_000 }, T0 + 300)]);
    // At T0 + 1,100 the window holds c and the new start: two.
    feed(lowered, [...start('d', T0 + 1_100)]);
    expect(lowered.report().violations).toBe(0);
    feed(lowered, [...start('e', T0 + 1_150)]);
    expect(lowered.report().violations).toBe(1);

    const widened = new RateLimitOracle();
    feed(widened, [setRate({ key: 'k' }, { max: 1, perMs: 1_000 }), ...start('a', T0), setRate({ key: 'k' }, { max: 1, perMs: 5_000 }, T0 + 500), ...start('b', T0 + 2_000)]);
    expect(widened.report().violations).toBe(1);

    const removed = new RateLimitOracle();
    feed(removed, [setRate({ key: 'k' }, { max: 1, perMs: 1_000 }), ...start('a', T0), setRate({ key: 'k' }, null), ...start('b', T0 + 1), setRate({ key: 'k' }, { max: 1, perMs: 1_000 }, T0 + 2), ...start('c', T0 + 3)]);
    expect(removed.report().violations).toBe(0);
    // With the limit gone, a declaration makes a new one.
    feed(removed, [setRate({ key: 'k' }, null), declare('d', { max: 1, perMs: 1_000 }), ...start('d', T0 + 4)]);
    expect(removed.report().violations).toBe(0);
  });

  it("applies a shortened window to the starts counted, and judges a keyed job by its queue's rate too", () => {
    const shortened = new RateLimitOracle();
    feed(shortened, [setRate({ key: 'k' }, { max: 1, perMs: 5_000 }), ...start('a', T0), setRate({ key: 'k' }, { max: 1, perMs: 1_000 }, T0 + 100), ...start('b', T0 + 1_000)]);
    expect(shortened.report().violations).toBe(0);
    const both = new RateLimitOracle();
    feed(both, [setRate({ queue: 'default' }, { max: 1, perMs: 1_000 }), setRate({ key: 'k' }, { max: 5, perMs: 1_000 }), ...start('a', T0), ...start('b', T0 + 10)]);
    expect(both.report()).toMatchObject({ violations: 1, examples: [expect.stringContaining('2 starts on queue:default')] });
  });

  it("flags exactly the starts the store's bookkeeping has no free start for, over random sets, changes, removals and starts", () => {
    let refusedInAll = 0;
    for (let seed = 1; seed <= 20; seed++) {
      const r = new SeededRandom(seed);
      const oracle = new RateLimitOracle();
      let window: RateWindow | null = null;
      let at = T0;
      let refused = 0;
      for (let i = 0; i < 300; i++) {
        at += r.nextInt(700);
        if (r.next() < 0.15) {
          const rate = r.next() < 0.2 ? null : { max: 1 + r.nextInt(4), perMs: 250 * (1 + r.nextInt(8)) };
          window = rate === null ? null : window ? resizeRateWindow(window, rate) : newRateWindow(rate);
          feed(oracle, [setRate({ key: 'k' }, rate, at)]);
          continue;
        }
        // Mostly starts the store would make; now and then one it would refuse, made anyway.
        const free = window === null || freeStarts(window, at) > 0;
        if (!free && r.next() < 0.7) continue;
        if (!free) refused += 1;
        if (window) useStart(window, at);
        feed(oracle, start(`j${i}`, at));
      }
      expect({ seed, violations: oracle.report().violations }).toEqual({ seed, violations: refused });
      refusedInAll += refused;
    }
    expect(refusedInAll).toBeGreaterThan(20);
  });

  it('does not count, after a raise, the starts a lower max had stopped counting (seed 0x6ee3040004545852)', () => {
    const oracle = new RateLimitOracle();
    // Max 1: b's start takes the place of a's. Raised to 2 with a longer window, the limit counts b
    // and one unused start, so c may start though a, b and c all lie within 2 s.
    feed(oracle, [setRate({ key: 'k' }, { max: 1, perMs: 1_000 }), ...start('a', T0), ...start('b', T0 + 1_003), setRate({ key: 'k' }, { max: 2, perMs: 2_000 }, T0 + 1_376), ...start('c', T0 + 1_574)]);
    expect(oracle.report().violations).toBe(0);
    // But not a fourth while b and c are in the window.
    feed(oracle, [...start('d', T0 + 2_000)]);
    expect(oracle.report().violations).toBe(1);
  });
});
