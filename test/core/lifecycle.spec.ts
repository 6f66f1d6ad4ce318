import { describe, expect, it } from '@jest/globals';
import {
  cancelOutcome,
  hasLapsedLease,
  holdsLiveLease,
  isClaimable,
  JOB_STATES,
  LEASE_EXPIRED,
  LEASE_RELINQUISHED,
  needsSweep,
  RELINQUISHED_ON_FINAL_ATTEMPT,
  transition,
  type JobEvent,
  type JobState,
  type LifecycleFields,
} from '../../lib/core/index.js';

const NOW = 1_000_000;

function job(fields: Partial<LifecycleFields> = {}): LifecycleFields {
  return {
    state: 'scheduled',
    runAt: NOW,
    attempt: 0,
    maxAttempts: 3,
    snoozes: 0,
    workerId: null,
    leasedUntil: null,
    cancelRequested: false,
    lastError: null,
    output: null,
    finishedAt: null,
    updatedAt: NOW - 10,
    ...fields,
  };
}

function running(fields: Partial<LifecycleFields> = {}): LifecycleFields {
  return job({ state: 'running', attempt: 1, workerId: 'w', leasedUntil: NOW + 5_000, ...fields });
}

function next(j: LifecycleFields, event: JobEvent, now = NOW): LifecycleFields {
  const result = transition(j, event, now);
  if (!result.ok) throw new Error(`expected ${event.kind} to apply, got ${result.rejection}`);
  return result.next;
}

describe('the lease fence', () => {
  it('holds only for the same worker and attempt, while the lease is strictly in the future', () => {
    const j = running();
    expect(holdsLiveLease(j, 'w', 1, NOW)).toBe(true);
    expect(holdsLiveLease(j, 'other', 1, NOW)).toBe(false);
    expect(holdsLiveLease(j, 'w', 2, NOW)).toBe(false);
    expect(holdsLiveLease(j, 'w', 1, NOW + 4_999)).toBe(true);
    expect(holdsLiveLease(j, 'w', 1, NOW + 5_000)).toBe(false);
    expect(holdsLiveLease(job({ workerId: 'w', attempt: 1 }), 'w', 1, NOW)).toBe(false);
  });

  it.each<[string, JobEvent]>([
    ['heartbeat', { kind: 'heartbeat', workerId: 'x', attempt: 1, leaseMs: 10 }],
    ['succeed', { kind: 'succeed', workerId: 'x', attempt: 1, output: null }],
    ['fail', { kind: 'fail', workerId: 'x', attempt: 1, error: 'e', retryDelayMs: 1 }],
    ['dead_letter', { kind: 'dead_letter', workerId: 'x', attempt: 1, error: 'e' }],
    ['quarantine', { kind: 'quarantine', workerId: 'x', attempt: 1, reason: 'r' }],
    ['relinquish', { kind: 'relinquish', workerId: 'x', attempt: 1 }],
  ])('rejects a %s from a worker without the live lease', (_kind, event) => {
    expect(transition(running(), event, NOW)).toEqual({ ok: false, rejection: 'stale_lease' });
    const lapsed = transition(running({ workerId: 'x' }), event, NOW + 5_000);
    expect(lapsed).toEqual({ ok: false, rejection: 'stale_lease' });
  });
});

describe('claim', () => {
  it('takes a due scheduled job: running, next attempt, leased to the claimer', () => {
    expect(next(job({ lastError: 'earlier' }), { kind: 'claim', workerId: 'w2', leaseMs: 30_000 })).toEqual({
      ...job({ lastError: 'earlier' }),
      state: 'running',
      attempt: 1,
      workerId: 'w2',
      leasedUntil: NOW + 30_000,
      updatedAt: NOW,
    });
  });

  it('takes a lapsed lease with budget and says the last attempt expired', () => {
    const lapsed = running({ leasedUntil: NOW });
    expect(hasLapsedLease(lapsed, NOW)).toBe(true);
    expect(next(lapsed, { kind: 'claim', workerId: 'w2', leaseMs: 10 })).toMatchObject({ attempt: 2, workerId: 'w2', lastError: LEASE_EXPIRED });
  });

  it.each<[string, LifecycleFields]>([
    ['a job that is not due yet', job({ runAt: NOW + 1 })],
    ['a live lease', running()],
    ['a lapsed lease without budget', running({ attempt: 3, leasedUntil: NOW - 1 })],
    ['a lapsed lease with a cancel request', running({ leasedUntil: NOW - 1, cancelRequested: true })],
    ['a scheduled job out of attempts', job({ attempt: 3 })],
    ...JOB_STATES.filter((s) => s !== 'scheduled' && s !== 'running').map((state): [string, LifecycleFields] => [`a ${state} job`, job({ state })]),
  ])('refuses %s', (_label, j) => {
    expect(isClaimable(j, NOW)).toBe(false);
    expect(transition(j, { kind: 'claim', workerId: 'w', leaseMs: 10 }, NOW)).toEqual({ ok: false, rejection: 'not_claimable' });
  });
});

describe('outcomes', () => {
  it('success records the output and finishes, even after a cancel request', () => {
    for (const cancelRequested of [false, true]) {
      expect(next(running({ cancelRequested }), { kind: 'succeed', workerId: 'w', attempt: 1, output: '{"a":1}' })).toMatchObject({
        state: 'succeeded',
        output: '{"a":1}',
        leasedUntil: null,
        finishedAt: NOW,
        workerId: 'w',
      });
    }
  });

  it('failure with budget reschedules after the delay and keeps the attempt', () => {
    expect(next(running(), { kind: 'fail', workerId: 'w', attempt: 1, error: 'boom', retryDelayMs: 2_000 })).toEqual({
      ...running(),
      state: 'scheduled',
      runAt: NOW + 2_000,
      workerId: null,
      leasedUntil: null,
      lastError: 'boom',
      updatedAt: NOW,
    });
  });

  it('failure on the last attempt dead-letters; with a cancel request it cancels', () => {
    const last = running({ attempt: 3 });
    expect(next(last, { kind: 'fail', workerId: 'w', attempt: 3, error: 'e', retryDelayMs: 1 })).toMatchObject({ state: 'dead_lettered', finishedAt: NOW });
    expect(next(running({ cancelRequested: true }), { kind: 'fail', workerId: 'w', attempt: 1, error: 'e', retryDelayMs: 1 })).toMatchObject({
      state: 'cancelled',
      lastError: 'e',
    });
  });

  it('issue 39 item 5: a snooze reschedules after its delay with no error, keeps the attempt and grows the budget by one', () => {
    const failedBefore = running({ lastError: 'timeout' });
    expect(next(failedBefore, { kind: 'snooze', workerId: 'w', attempt: 1, delayMs: 5_000 })).toEqual({
      ...failedBefore,
      state: 'scheduled',
      runAt: NOW + 5_000,
      maxAttempts: 4,
      snoozes: 1,
      workerId: null,
      leasedUntil: null,
      lastError: null,
      updatedAt: NOW,
    });
    // On the last attempt too: a snooze is no failure.
    expect(next(running({ attempt: 3 }), { kind: 'snooze', workerId: 'w', attempt: 3, delayMs: 0 })).toMatchObject({ state: 'scheduled', attempt: 3, maxAttempts: 4 });
  });

  it('issue 39 item 5: a snooze of a cancel-requested job cancels it, budget untouched; a stale snooze changes nothing', () => {
    expect(next(running({ cancelRequested: true }), { kind: 'snooze', workerId: 'w', attempt: 1, delayMs: 5_000 })).toMatchObject({
      state: 'cancelled',
      maxAttempts: 3,
      snoozes: 0,
      lastError: null,
      finishedAt: NOW,
    });
    expect(transition(running(), { kind: 'snooze', workerId: 'other', attempt: 1, delayMs: 0 }, NOW)).toEqual({ ok: false, rejection: 'stale_lease' });
    expect(transition(running(), { kind: 'snooze', workerId: 'w', attempt: 2, delayMs: 0 }, NOW)).toEqual({ ok: false, rejection: 'stale_lease' });
  });

  it('issue 39 item 5: a replay takes back the budget the snoozes added', () => {
    expect(next(job({ state: 'dead_lettered', attempt: 5, maxAttempts: 5, snoozes: 2 }), { kind: 'replay' })).toMatchObject({ state: 'scheduled', attempt: 0, maxAttempts: 3, snoozes: 0 });
  });

  it('an explicit dead-letter ignores the remaining budget', () => {
    expect(next(running(), { kind: 'dead_letter', workerId: 'w', attempt: 1, error: 'fatal' })).toMatchObject({ state: 'dead_lettered', attempt: 1 });
  });

  it('quarantine keeps the charged attempt and records the reason', () => {
    expect(next(running(), { kind: 'quarantine', workerId: 'w', attempt: 1, reason: 'no handler' })).toMatchObject({
      state: 'quarantined',
      attempt: 1,
      lastError: 'no handler',
    });
    expect(next(running({ cancelRequested: true }), { kind: 'quarantine', workerId: 'w', attempt: 1, reason: 'r' }).state).toBe('cancelled');
  });

  it('heartbeat extends the live lease only', () => {
    expect(next(running(), { kind: 'heartbeat', workerId: 'w', attempt: 1, leaseMs: 30_000 }, NOW + 100)).toMatchObject({
      leasedUntil: NOW + 30_100,
      state: 'running',
    });
  });
});

describe('relinquish', () => {
  it('hands the job back due now, with the attempt charged and the reason it ended, and wakes workers', () => {
    // An older attempt's error is replaced: the history entry says why this attempt ended (issue 19 item 5).
    const result = transition(running({ lastError: 'card declined' }), { kind: 'relinquish', workerId: 'w', attempt: 1 }, NOW);
    expect(result).toEqual({
      ok: true,
      next: { ...running(), state: 'scheduled', runAt: NOW, workerId: null, leasedUntil: null, lastError: LEASE_RELINQUISHED, updatedAt: NOW },
      effects: [{ type: 'wake' }, { type: 'history', state: 'scheduled', attempt: 1, error: LEASE_RELINQUISHED }, { type: 'release_slots' }],
    });
  });

  it('dead-letters the last attempt and cancels a cancel-requested one', () => {
    expect(next(running({ attempt: 3 }), { kind: 'relinquish', workerId: 'w', attempt: 3 })).toMatchObject({
      state: 'dead_lettered',
      lastError: RELINQUISHED_ON_FINAL_ATTEMPT,
    });
    expect(next(running({ cancelRequested: true }), { kind: 'relinquish', workerId: 'w', attempt: 1 })).toMatchObject({
      state: 'cancelled',
      lastError: LEASE_RELINQUISHED,
    });
  });
});

describe('issue 19 item 5: the error a history entry carries', () => {
  const entryError = (j: LifecycleFields, event: JobEvent, now = NOW) => {
    const result = transition(j, event, now);
    if (!result.ok) throw new Error(result.rejection);
    return result.effects.find((e) => e.type === 'history')?.error;
  };
  const same = 'card declined';

  it('is the error that ended the attempt, even when it repeats the previous one', () => {
    const retried = running({ attempt: 2, lastError: same });
    expect(entryError(retried, { kind: 'fail', workerId: 'w', attempt: 2, error: same, retryDelayMs: 0 })).toBe(same);
    expect(entryError(running({ attempt: 3, lastError: same }), { kind: 'fail', workerId: 'w', attempt: 3, error: same, retryDelayMs: 0 })).toBe(same);
    expect(entryError(retried, { kind: 'dead_letter', workerId: 'w', attempt: 2, error: same })).toBe(same);
    expect(entryError(retried, { kind: 'quarantine', workerId: 'w', attempt: 2, reason: same })).toBe(same);
    expect(entryError(running({ attempt: 2, lastError: same, cancelRequested: true }), { kind: 'fail', workerId: 'w', attempt: 2, error: same, retryDelayMs: 0 })).toBe(same);
    const lapsedTwice = running({ attempt: 3, lastError: LEASE_EXPIRED, leasedUntil: NOW });
    expect(entryError(lapsedTwice, { kind: 'expire' })).toBe(LEASE_EXPIRED);
    expect(entryError(running({ attempt: 2, lastError: LEASE_EXPIRED, leasedUntil: NOW }), { kind: 'claim', workerId: 'w2', leaseMs: 1_000 })).toBe(LEASE_EXPIRED);
  });

  it('is the error a change newly sets, and none for a claim, a success, a release or a replay', () => {
    expect(entryError(job({ state: 'awaiting_parents' }), { kind: 'cascade_cancel', parentId: 'p', parentState: 'dead_lettered' })).toBe('parent p ended dead_lettered');
    expect(entryError(job({ attempt: 1, lastError: same }), { kind: 'claim', workerId: 'w', leaseMs: 1_000 })).toBeNull();
    expect(entryError(running({ attempt: 2, lastError: same }), { kind: 'succeed', workerId: 'w', attempt: 2, output: null })).toBeNull();
    expect(entryError(job({ state: 'awaiting_parents' }), { kind: 'release' })).toBeNull();
    expect(entryError(job({ state: 'dead_lettered', attempt: 3, lastError: same }), { kind: 'replay' })).toBeNull();
    // An operator's cancel of a waiting job did not end an attempt, so it does not repeat the last error.
    expect(entryError(job({ attempt: 1, lastError: same }), { kind: 'cancel' })).toBeNull();
  });
});

describe('the sweep', () => {
  it('settles lapsed leases no claim will take', () => {
    expect(needsSweep(running({ attempt: 3, leasedUntil: NOW }), NOW)).toBe(true);
    expect(next(running({ attempt: 3, leasedUntil: NOW }), { kind: 'expire' })).toMatchObject({ state: 'dead_lettered', lastError: LEASE_EXPIRED });
    expect(next(running({ cancelRequested: true, leasedUntil: NOW }), { kind: 'expire' })).toMatchObject({ state: 'cancelled', lastError: LEASE_EXPIRED });
  });

  it.each<[string, LifecycleFields]>([
    ['a live lease', running({ attempt: 3 })],
    ['a lapsed lease with budget (a claim takes it)', running({ leasedUntil: NOW })],
    ['a scheduled job', job()],
  ])('leaves %s alone', (_label, j) => {
    expect(transition(j, { kind: 'expire' }, NOW)).toEqual({ ok: false, rejection: 'not_sweepable' });
  });
});

describe('operator actions', () => {
  it.each<JobState>(['dead_lettered', 'quarantined'])('replay resets a %s job to attempt 0, due now', (state) => {
    const result = transition(job({ state, attempt: 3, lastError: 'x', output: '1', finishedAt: NOW - 5, workerId: 'w' }), { kind: 'replay' }, NOW);
    expect(result).toEqual({
      ok: true,
      next: job({ state: 'scheduled', attempt: 0, runAt: NOW, lastError: null, output: null, finishedAt: null, workerId: null, updatedAt: NOW }),
      effects: [{ type: 'wake' }, { type: 'history', state: 'scheduled', attempt: 0, error: null }],
    });
  });

  it.each(JOB_STATES.filter((s) => s !== 'dead_lettered' && s !== 'quarantined'))('replay refuses a %s job', (state) => {
    expect(transition(job({ state }), { kind: 'replay' }, NOW)).toEqual({ ok: false, rejection: 'illegal_state' });
  });

  it('cancel ends a waiting job, flags a running one, and repeats as a no-op', () => {
    for (const state of ['scheduled', 'awaiting_parents'] as const) {
      const before = job({ state });
      const after = next(before, { kind: 'cancel' });
      expect(after).toMatchObject({ state: 'cancelled', finishedAt: NOW });
      expect(cancelOutcome(before, after)).toBe('cancelled');
    }
    const flagged = next(running(), { kind: 'cancel' });
    expect(flagged).toEqual({ ...running(), cancelRequested: true, updatedAt: NOW });
    expect(cancelOutcome(running(), flagged)).toBe('cancel_requested');

    const again = transition(flagged, { kind: 'cancel' }, NOW + 1);
    expect(again.ok && again.next).toBe(flagged);
    expect(cancelOutcome(flagged, flagged)).toBe('already_requested');
    const cancelled = job({ state: 'cancelled' });
    const noop = transition(cancelled, { kind: 'cancel' }, NOW);
    expect(noop.ok && noop.next).toBe(cancelled);
    expect(cancelOutcome(cancelled, cancelled)).toBe('already_cancelled');
  });

  it('cancel refuses a succeeded job: the work happened', () => {
    expect(transition(job({ state: 'succeeded' }), { kind: 'cancel' }, NOW)).toEqual({ ok: false, rejection: 'illegal_state' });
  });

  // Its dependants' edges settled when it failed, each once; the settle it asks for reaches only the
  // edges its failure left open: a sequence's next job, which the discard releases (docs/sequences.md).
  it.each<JobState>(['dead_lettered', 'quarantined'])('cancel discards a %s job: cancelled, error kept, and the edges its failure left open settle', (state) => {
    const before = job({ state, attempt: 3, lastError: 'boom', finishedAt: NOW - 1_000 });
    const result = transition(before, { kind: 'cancel' }, NOW);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.next).toMatchObject({ state: 'cancelled', attempt: 3, lastError: 'boom', finishedAt: NOW });
    expect(result.effects).toEqual([{ type: 'history', state: 'cancelled', attempt: 3, error: null }, { type: 'settle_dependants' }]);
    expect(cancelOutcome(before, result.next)).toBe('cancelled');
  });
});

describe('terminal states', () => {
  it('no worker event moves a terminal job', () => {
    const events: JobEvent[] = [
      { kind: 'claim', workerId: 'w', leaseMs: 10 },
      { kind: 'heartbeat', workerId: 'w', attempt: 1, leaseMs: 10 },
      { kind: 'succeed', workerId: 'w', attempt: 1, output: null },
      { kind: 'fail', workerId: 'w', attempt: 1, error: 'e', retryDelayMs: 0 },
      { kind: 'relinquish', workerId: 'w', attempt: 1 },
      { kind: 'expire' },
    ];
    for (const state of ['succeeded', 'dead_lettered', 'cancelled', 'quarantined'] as const) {
      for (const event of events) {
        expect(transition(job({ state, attempt: 1, workerId: 'w', leasedUntil: null }), event, NOW).ok).toBe(false);
      }
    }
  });
});

describe('effects', () => {
  const effects = (j: LifecycleFields, event: JobEvent, now = NOW) => {
    const result = transition(j, event, now);
    if (!result.ok) throw new Error(result.rejection);
    return result.effects;
  };

  it('records every change of state or attempt in the history, with the error it set', () => {
    expect(effects(job(), { kind: 'claim', workerId: 'w', leaseMs: 10 })).toEqual([{ type: 'history', state: 'running', attempt: 1, error: null }]);
    expect(effects(running(), { kind: 'fail', workerId: 'w', attempt: 1, error: 'boom', retryDelayMs: 5 })).toContainEqual({
      type: 'history',
      state: 'scheduled',
      attempt: 1,
      error: 'boom',
    });
    // A reclaim starts another attempt in the same state, and says why.
    expect(effects(running({ leasedUntil: NOW }), { kind: 'claim', workerId: 'w2', leaseMs: 10 })).toEqual([
      { type: 'history', state: 'running', attempt: 2, error: LEASE_EXPIRED },
    ]);
    // A heartbeat and a repeated cancel request change neither, so nothing is recorded.
    expect(effects(running(), { kind: 'heartbeat', workerId: 'w', attempt: 1, leaseMs: 10 })).toEqual([]);
    expect(effects(running({ cancelRequested: true }), { kind: 'cancel' })).toEqual([]);
  });

  it('releases concurrency slots exactly when a job stops running', () => {
    expect(effects(running(), { kind: 'succeed', workerId: 'w', attempt: 1, output: null })).toContainEqual({ type: 'release_slots' });
    expect(effects(running(), { kind: 'relinquish', workerId: 'w', attempt: 1 })).toContainEqual({ type: 'release_slots' });
    expect(effects(running({ attempt: 3, leasedUntil: NOW }), { kind: 'expire' })).toContainEqual({ type: 'release_slots' });
    expect(effects(job(), { kind: 'claim', workerId: 'w', leaseMs: 10 })).not.toContainEqual({ type: 'release_slots' });
    expect(effects(running(), { kind: 'cancel' })).not.toContainEqual({ type: 'release_slots' });
  });

  it('settles dependants when a job first becomes terminal, whatever the terminal state', () => {
    const settle = { type: 'settle_dependants' };
    expect(effects(running(), { kind: 'succeed', workerId: 'w', attempt: 1, output: null })).toContainEqual(settle);
    expect(effects(running({ attempt: 3 }), { kind: 'fail', workerId: 'w', attempt: 3, error: 'e', retryDelayMs: 0 })).toContainEqual(settle);
    expect(effects(job(), { kind: 'cancel' })).toContainEqual(settle);
    expect(effects(running(), { kind: 'fail', workerId: 'w', attempt: 1, error: 'e', retryDelayMs: 0 })).not.toContainEqual(settle);
  });

  it('releases a waiting dependant no earlier than its own runAt, and cascades a cancel with the reason', () => {
    const waiting = job({ state: 'awaiting_parents', runAt: NOW + 60_000 });
    expect(next(waiting, { kind: 'release' })).toMatchObject({ state: 'scheduled', runAt: NOW + 60_000 });
    expect(next(job({ state: 'awaiting_parents', runAt: NOW - 5 }), { kind: 'release' })).toMatchObject({ runAt: NOW });
    expect(next(waiting, { kind: 'cascade_cancel', parentId: 'p-1', parentState: 'dead_lettered' })).toMatchObject({
      state: 'cancelled',
      lastError: 'parent p-1 ended dead_lettered',
    });
    expect(transition(job(), { kind: 'release' }, NOW)).toEqual({ ok: false, rejection: 'illegal_state' });
  });
});
