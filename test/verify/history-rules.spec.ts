import { describe, expect, it } from '@jest/globals';
import type { JobState } from '../../lib/core/index.js';
import type { HistoryEntry } from '../../lib/store/index.js';
import { checkJobEntries } from '../../lib/verify/index.js';

const JOB = '01900000-0000-7000-8000-00000000000a';

/**
 * A job's entries from `state:attempt[:worker[:lease]]` steps, ids 1, 2, 3…, the i-th stamped at
 * i seconds; `lease` is the deadline, in seconds, of the lease the change ended.
 */
function history(...steps: string[]): HistoryEntry[] {
  return steps.map((step, i) => {
    const [state, attempt, worker, lease] = step.split(':');
    return {
      id: i + 1,
      position: String(i + 1),
      jobId: JOB,
      name: 'n',
      at: new Date(1_000 * i),
      state: state as JobState,
      attempt: Number(attempt),
      error: null,
      workerId: worker || null,
      leaseUntil: lease === undefined ? null : new Date(1_000 * Number(lease)),
    };
  });
}

const rulesOf = (...steps: string[]) => checkJobEntries(history(...steps)).violations.map((v) => [v.rule, ...v.entryIds]);

describe('issue 40: the lifecycle rules over one job\'s history', () => {
  it.each([
    ['a success', ['scheduled:0', 'running:1', 'succeeded:1']],
    ['retries, a snooze and a lapsed lease reclaimed', ['scheduled:0', 'running:1', 'scheduled:1', 'running:2', 'running:3', 'scheduled:3', 'running:4', 'succeeded:4']],
    ['a dead letter replayed, then discarded after failing again', ['scheduled:0', 'running:1', 'dead_lettered:1', 'scheduled:0', 'running:1', 'quarantined:1', 'cancelled:1']],
    ['a dependant released, and one cancelled before it ran', ['awaiting_parents:0', 'scheduled:0', 'cancelled:0']],
    ['a history trimmed to its newest entries', ['running:7', 'scheduled:7', 'running:8', 'dead_lettered:8']],
  ])('passes %s', (_, steps) => {
    const check = checkJobEntries(history(...steps));
    expect(check.violations).toEqual([]);
    expect(check.transitions).toBe(steps.length - 1);
    expect(check.attempts).toBe(steps.filter((s) => s.startsWith('running')).length);
  });

  it('names a change the lifecycle never makes', () => {
    expect(rulesOf('scheduled:0', 'succeeded:0')).toEqual([['illegal_transition', 1, 2]]);
    expect(rulesOf('awaiting_parents:0', 'running:1')).toEqual([['illegal_transition', 1, 2]]);
  });

  it('names a job that moved after it succeeded or was cancelled', () => {
    expect(rulesOf('scheduled:0', 'running:1', 'succeeded:1', 'running:2')).toEqual([['terminal_left', 3, 4]]);
    expect(rulesOf('scheduled:0', 'cancelled:0', 'scheduled:0')).toEqual([['terminal_left', 2, 3]]);
  });

  it('names an attempt that does not count one up, or a replay that does not start again', () => {
    expect(rulesOf('scheduled:0', 'running:1', 'scheduled:1', 'running:3')).toEqual([['attempt_skipped', 3, 4]]);
    expect(rulesOf('scheduled:0', 'running:1', 'dead_lettered:1', 'scheduled:1')).toEqual([['attempt_skipped', 3, 4]]);
    expect(rulesOf('scheduled:0', 'running:1', 'scheduled:2')).toEqual([['attempt_skipped', 2, 3]]);
  });

  it('names a second outcome of one attempt: a late success after the retry, or a success recorded twice', () => {
    expect(rulesOf('scheduled:0', 'running:1', 'scheduled:1', 'succeeded:1')).toEqual([['two_outcomes', 3, 4]]);
    expect(rulesOf('scheduled:0', 'running:1', 'succeeded:1', 'succeeded:1')).toEqual([['two_outcomes', 3, 4]]);
    expect(rulesOf('scheduled:0', 'running:1', 'dead_lettered:1', 'dead_lettered:1')).toEqual([['two_outcomes', 3, 4]]);
    // After a replay the attempts start again, so attempt 1 may end again.
    expect(rulesOf('scheduled:0', 'running:1', 'dead_lettered:1', 'scheduled:0', 'running:1', 'succeeded:1')).toEqual([]);
  });

  it('judges each end of a lease by the deadline and holder its entry records', () => {
    // Entry i is stamped at i seconds. A success at 2 s of a lease to 5 s, a heartbeat-renewed one
    // ending at 9 s, a lapsed lease reclaimed at its deadline, and the sweep's dead letter after it.
    const clean = checkJobEntries(history('scheduled:0', 'running:1:a', 'scheduled:1:a:5', 'running:2:b', 'running:3:c:4', 'dead_lettered:3:c:4'));
    expect(clean.violations).toEqual([]);
    expect([clean.leasesJudged, clean.leasesUnknown]).toEqual([3, 0]);
    expect(rulesOf('scheduled:0', 'running:1:a', 'succeeded:1:a:3')).toEqual([]);
    expect(rulesOf('scheduled:0', 'running:1:a', 'cancelled:1:a:1')).toEqual([]);
    // At the deadline's millisecond an outcome is not judged (PostgreSQL's fence compares microseconds,
    // read back as milliseconds); after it, it is one the fence should have refused. A reclaim may take it at the deadline.
    expect(rulesOf('scheduled:0', 'running:1:a', 'succeeded:1:a:2')).toEqual([]);
    expect(rulesOf('scheduled:0', 'running:1:a', 'succeeded:1:a:1.999')).toEqual([['stale_lease', 2, 3]]);
    expect(rulesOf('scheduled:0', 'running:1:a', 'scheduled:1:a:1')).toEqual([['stale_lease', 2, 3]]);
    expect(rulesOf('scheduled:0', 'running:1:a', 'quarantined:1:a:1')).toEqual([['stale_lease', 2, 3]]);
    expect(rulesOf('scheduled:0', 'running:1:a', 'running:2:b:2')).toEqual([]);
    expect(rulesOf('scheduled:0', 'running:1:a', 'running:2:b:3')).toEqual([['early_reclaim', 2, 3]]);
    expect(rulesOf('scheduled:0', 'running:1:a', 'succeeded:1:b:9')).toEqual([['wrong_holder', 2, 3]]);
    expect(checkJobEntries(history('scheduled:0', 'running:1:a', 'succeeded:1:b:9')).violations[0]!.message).toBe(
      `Job ${JOB} was claimed by a in running (attempt 1, entry 2), but succeeded (attempt 1, entry 3) ended the lease of b.`,
    );
  });

  it('counts an end of a lease its entries do not record, and judges nothing of it', () => {
    const check = checkJobEntries(history('scheduled:0', 'running:1', 'succeeded:1'));
    expect([check.violations, check.leasesJudged, check.leasesUnknown]).toEqual([[], 0, 1]);
    const half = checkJobEntries(history('scheduled:0', 'running:1:a', 'succeeded:1'));
    expect([half.violations, half.leasesJudged, half.leasesUnknown]).toEqual([[], 0, 1]);
  });
});
