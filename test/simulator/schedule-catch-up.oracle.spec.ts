import { describe, expect, it } from '@jest/globals';
import { OccurrenceId } from '../../lib/core/index.js';
import type { Schedule } from '../../lib/store/index.js';
import { ScheduleCatchUpOracle, type SimEvent } from '../../lib/simulator/index.js';
import { call, feed, row, T0, write } from './history-builder.js';

const id = '0195f4c2-7c4b-7a41-9d2e-3b1c5a6f7e80';
const SECOND = 1_000;

/** A one-second interval schedule whose first tick is T0, as the store reports it. */
function schedule(overrides: Partial<Schedule> = {}): Schedule {
  return {
    id,
    name: 'sim.work',
    queue: 'default',
    payload: {},
    maxAttempts: 3,
    recurrence: { kind: 'interval', everyMs: SECOND, anchorAt: new Date(T0 - SECOND) },
    catchUp: 'skip',
    noOverlap: false,
    misfireGraceMs: 10 * SECOND,
    state: 'active',
    nextFireAt: new Date(T0),
    lastFiredFor: null,
    lastJobId: null,
    haltedJobId: null,
    skippedTicks: 0,
    lastSkippedFor: null,
    lastSkipReason: null,
    traceContext: null,
    createdAt: new Date(T0 - SECOND),
    updatedAt: new Date(T0 - SECOND),
    ...overrides,
  };
}

const operator = { kind: 'operator' } as const;
const created = (s: Schedule): SimEvent => call('scheduleUpsert', operator, [{}], { schedule: s, created: true, changed: true }, T0 - SECOND);
const jobOf = (tick: number) => OccurrenceId.derive(id, new Date(tick));
/** A minting pass at `at` that minted `ticks` and reported `skipped` (with the jobs' writes first). */
function pass(at: number, ticks: number[], skipped: { count: number; reason: 'missed' | 'overlap'; lowerBound?: true }[] = []): SimEvent[] {
  return [
    ...ticks.map((tick) => write(undefined, row({ id: jobOf(tick), scheduleId: id, scheduledFor: tick, runAt: tick }), at)),
    call('scheduleMintDue', { kind: 'worker', workerId: 'w1' }, [{ limit: 100 }], {
      minted: ticks.map((tick) => ({ scheduleId: id, jobId: jobOf(tick), scheduledFor: new Date(tick), created: true })),
      skipped: skipped.map((s) => ({ scheduleId: id, ...s })),
    }, at),
  ];
}
const endAt = (nextFireAt: number, skippedTicks: number, overrides: Partial<Schedule> = {}) => ({
  now: nextFireAt,
  drained: true,
  rows: [],
  schedules: [schedule({ nextFireAt: new Date(nextFireAt), skippedTicks, ...overrides })],
});

function violations(events: readonly SimEvent[], end?: ReturnType<typeof endAt>): { count: number; first: string | undefined } {
  const oracle = new ScheduleCatchUpOracle();
  feed(oracle, events);
  if (end) oracle.finish(end);
  return { count: oracle.report().violations, first: oracle.report().examples[0] };
}

describe('issue 19 item 1: the schedule catch-up oracle', () => {
  const late = T0 + 100 * SECOND; // 100 ticks are due; the last 11 are within the 10 s grace

  it('accepts a catch-up that follows each policy and accounts for every tick', () => {
    const graceTicks = Array.from({ length: 11 }, (_, i) => late - 10 * SECOND + i * SECOND);
    expect(violations([created(schedule()), ...pass(late, graceTicks, [{ count: 90, reason: 'missed' }])], endAt(late + SECOND, 90))).toEqual({ count: 0, first: undefined });
    expect(violations([created(schedule({ catchUp: 'coalesce' })), ...pass(late, [late], [{ count: 100, reason: 'missed' }])], endAt(late + SECOND, 100, { catchUp: 'coalesce' })).count).toBe(0);
    // A count flagged as a lower bound may fall short of the ticks, never exceed them.
    expect(violations([created(schedule()), ...pass(late, graceTicks, [{ count: 50, reason: 'missed', lowerBound: true }])], endAt(late + SECOND, 50)).count).toBe(0);
  });

  it('counts a skip schedule minting a tick past its grace, and a tick minted before its time', () => {
    const result = violations([created(schedule()), ...pass(late, [late - 11 * SECOND, late + SECOND])]);
    expect(result.count).toBe(2);
    expect(result.first).toMatch(/\(skip\) minted .* past its 10000 ms grace/);
  });

  it('counts coalesce minting missed ticks other than one make-up job at the latest tick', () => {
    const coalesce = created(schedule({ catchUp: 'coalesce' }));
    expect(violations([coalesce, ...pass(late, [late - 20 * SECOND, late - 19 * SECOND])]).count).toBe(2);
    expect(violations([coalesce, ...pass(late, [late - 20 * SECOND])]).first).toMatch(/not one make-up job at the latest due tick/);
  });

  it('counts noOverlap minting two at once, or while the previous occurrence runs', () => {
    const single = created(schedule({ noOverlap: true, misfireGraceMs: 200 * SECOND }));
    expect(violations([single, ...pass(late, [late - SECOND, late])]).count).toBe(1);
    const stillRunning = write(undefined, row({ id: jobOf(late), scheduleId: id, scheduledFor: late, state: 'running', attempt: 1 }), late);
    const result = violations([single, ...pass(late, [late]), stillRunning, ...pass(late + SECOND, [late + SECOND])]);
    expect(result).toEqual({ count: 1, first: expect.stringMatching(/\(noOverlap\) minted while .* was running/) });
  });

  it('counts ticks that were neither minted nor counted, a count beyond the ticks, and a stored count that differs', () => {
    const graceTicks = Array.from({ length: 11 }, (_, i) => late - 10 * SECOND + i * SECOND);
    expect(violations([created(schedule()), ...pass(late, graceTicks, [{ count: 89, reason: 'missed' }])], endAt(late + SECOND, 89)).first).toMatch(/had 101 ticks .* minted 11 and skipped 89/);
    expect(violations([created(schedule()), ...pass(late, graceTicks, [{ count: 95, reason: 'missed', lowerBound: true }])], endAt(late + SECOND, 95)).count).toBe(1);
    expect(violations([created(schedule()), ...pass(late, graceTicks, [{ count: 90, reason: 'missed' }])], endAt(late + SECOND, 91)).first).toMatch(/stored 91 skipped ticks, but its passes reported 90/);
  });
});
