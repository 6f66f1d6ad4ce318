import { describe, expect, it } from '@jest/globals';
import { MINT_PLAN_MAX_COUNTED, MINT_PLAN_MAX_MINTS, nextFireAfter, planMint, type MintPlan, type MintPolicy, type Recurrence } from '../../lib/core/index.js';

const SECOND = 1_000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const YEAR = 365 * DAY;

/**
 * The tick function, remembered: it is pure, and the matrix below asks the same questions for
 * every policy, which croner answers in a tenth of a millisecond each in a time zone.
 */
const remembered = new Map<Recurrence, Map<number, number | null>>();
function tick(recurrence: Recurrence, after: number): number | null {
  let answers = remembered.get(recurrence);
  if (!answers) remembered.set(recurrence, (answers = new Map()));
  let answer = answers.get(after);
  if (answer === undefined) answers.set(after, (answer = nextFireAfter(recurrence, after)));
  return answer;
}

/** The tick function, counted; a planner that walks the gap fails here instead of hanging the run. */
function countingTicks(ceiling = 100_000) {
  const counter = {
    calls: 0,
    next: (recurrence: Recurrence, after: number) => {
      counter.calls += 1;
      if (counter.calls > ceiling) throw new Error(`the planner called the tick function more than ${ceiling} times`);
      return tick(recurrence, after);
    },
  };
  return counter;
}

/** Due ticks, oldest first: a list stepped through one by one, or an arithmetic run of them. */
interface DueTicks {
  readonly length: number;
  at(index: number): number;
}

/** Every due tick from `from` through `now`, one by one, or null when there are more than `limit`. */
function enumerate(recurrence: Recurrence, from: number, now: number, limit: number): DueTicks | null {
  const ticks: number[] = [];
  for (let t: number | null = from; t !== null && t <= now; t = tick(recurrence, t)) {
    if (ticks.length === limit) return null;
    ticks.push(t);
  }
  return { length: ticks.length, at: (i) => ticks[i]! };
}

/** The ticks `from + k × step` through `now`: what a pattern that fires every `step` has due. */
function arithmetic(from: number, step: number, now: number): DueTicks {
  return { length: Math.floor((now - from) / step) + 1, at: (i) => from + i * step };
}

/** The policy applied by the rules' plain words to the full run of due ticks, then capped at `maxMints`. */
function reference(recurrence: Recurrence, policy: MintPolicy, due: DueTicks, now: number, previousRunning: boolean, maxMints: number) {
  const n = due.length;
  // The first due tick within the grace (ticks are sorted, so search for the split).
  let lo = 0;
  for (let hi = n; lo < hi; ) {
    const mid = (lo + hi) >> 1;
    if (now - due.at(mid) > policy.misfireGraceMs) lo = mid + 1;
    else hi = mid;
  }
  const missed = lo;
  const coalesced = policy.catchUp === 'coalesce' && missed > 0;
  // The mint candidates are the due ticks at indexes [from, to).
  let [from, to] = coalesced ? [n - 1, n] : [missed, n];
  let count = coalesced ? n - 1 : missed;
  let reason: 'missed' | 'overlap' | null = count > 0 ? 'missed' : null;
  let last = coalesced ? (n >= 2 ? due.at(n - 2) : null) : missed > 0 ? due.at(missed - 1) : null;
  const candidates = to - from;
  if (policy.noOverlap && candidates > 0 && (previousRunning || candidates > 1)) {
    count += previousRunning ? candidates : candidates - 1;
    reason = 'overlap';
    last = previousRunning ? due.at(n - 1) : due.at(n - 2);
    from = previousRunning ? n : n - 1;
  }
  let nextFireAt = tick(recurrence, now);
  if (to - from > maxMints) {
    nextFireAt = due.at(from + maxMints);
    to = from + maxMints;
  }
  const mint = Array.from({ length: to - from }, (_, i) => due.at(from + i));
  return { mint, count, reason, last: count > 0 ? last : null, nextFireAt };
}

function expectMatchesReference(plan: MintPlan, ref: ReturnType<typeof reference>, recurrence: Recurrence, maxCounted: number, label: string) {
  expect({ label, mint: plan.mint, last: plan.skipped.last, reason: plan.skipped.reason, nextFireAt: plan.nextFireAt }).toEqual({
    label,
    mint: ref.mint,
    last: ref.last,
    reason: ref.reason,
    nextFireAt: ref.nextFireAt,
  });
  if (plan.skipped.lowerBound) {
    // A lower bound only where counting exactly would step through maxCounted ticks or more.
    expect({ label, kind: recurrence.kind, valid: plan.skipped.count <= ref.count && plan.skipped.count >= maxCounted }).toEqual({ label, kind: 'cron', valid: true });
  } else {
    expect({ label, count: plan.skipped.count }).toEqual({ label, count: ref.count });
  }
}

const cron = (pattern: string, timezone: string): Recurrence => ({ kind: 'cron', cron: pattern, timezone });
const every = (intervalMs: number): Recurrence => ({ kind: 'interval', intervalMs, anchorAt: Date.UTC(2016, 0, 1, 0, 0, 7, 250) });

/**
 * Each pattern, and for those that fire at every multiple of a fixed step (every second, minute
 * or real hour, in Berlin too, whose offsets are whole hours), that step: brute force then follows
 * them arithmetically where stepping one by one would take too long. The first test checks the
 * step against the pattern.
 */
const PATTERNS: readonly [string, Recurrence, number | null][] = [
  ...['UTC', 'Europe/Berlin'].flatMap((zone): [string, Recurrence, number | null][] => [
    [`every second (${zone})`, cron('* * * * * *', zone), SECOND],
    [`every minute (${zone})`, cron('* * * * *', zone), MINUTE],
    [`hourly (${zone})`, cron('0 * * * *', zone), HOUR],
    [`daily at 02:30 (${zone})`, cron('30 2 * * *', zone), null],
    [`monthly (${zone})`, cron('0 9 1 * *', zone), null],
    [`yearly (${zone})`, cron('0 0 1 1 *', zone), null],
  ]),
  ['every 1 s', every(SECOND), SECOND],
  ['every 1 min', every(MINUTE), MINUTE],
  ['every 1 h', every(HOUR), HOUR],
  ['every 1 day', every(DAY), DAY],
  ['every 30 days', every(30 * DAY), 30 * DAY],
  ['every year', every(YEAR), YEAR],
];
const OUTAGES = [HOUR, 17 * HOUR, 30 * DAY, YEAR, 10 * YEAR];
const GRACES = [SECOND, MINUTE, HOUR, DAY];
const POLICIES: readonly [string, Omit<MintPolicy, 'misfireGraceMs'>, boolean][] = [
  ['skip', { catchUp: 'skip', noOverlap: false }, false],
  ['coalesce', { catchUp: 'coalesce', noOverlap: false }, false],
  ['skip + noOverlap', { catchUp: 'skip', noOverlap: true }, false],
  ['skip + noOverlap, previous running', { catchUp: 'skip', noOverlap: true }, true],
  ['coalesce + noOverlap', { catchUp: 'coalesce', noOverlap: true }, false],
  ['coalesce + noOverlap, previous running', { catchUp: 'coalesce', noOverlap: true }, true],
];
// Outages that end just after Berlin's daylight saving changes of 2026 (spring forward, fall back).
const ENDS = [Date.UTC(2026, 2, 29, 1, 0, 30, 500), Date.UTC(2026, 9, 25, 1, 30, 0, 0)];

/** The due ticks of an outage: stepped through where that is cheap, else by the pattern's step. */
function dueTicks(recurrence: Recurrence, step: number | null, nextFireAt: number, now: number): DueTicks {
  const stepped = step === null || (now - nextFireAt) / step < 1_000;
  const listed = recurrence.kind === 'cron' && stepped ? enumerate(recurrence, nextFireAt, now, 4_000) : null;
  if (listed) return listed;
  if (step === null) throw new Error('a pattern without a step must be short enough to step through');
  return arithmetic(nextFireAt, step, now);
}

describe('issue 19 item 1: planMint is bounded by what it mints, whatever the outage', () => {
  // Small limits make the cap and the lower bound show up even where brute force can follow.
  const limits = { maxMints: 25, maxCounted: 25 };
  const bound = limits.maxMints + limits.maxCounted + 4 * 60 + 8;

  it.each(PATTERNS)('%s: outages of 1 h to 10 years, every policy and grace, as brute force decides', (name, recurrence, step) => {
    for (const outage of OUTAGES) {
      for (const now of ENDS) {
        const nextFireAt = nextFireAfter(recurrence, now - outage)!;
        if (step !== null) {
          // The step is what the pattern does, at both ends of the outage.
          for (const from of [nextFireAt, now - 40 * step]) {
            const stepped = enumerate(recurrence, nextFireAfter(recurrence, from - 1)!, from + 30 * step, 100)!;
            expect(Array.from({ length: stepped.length }, (_, i) => stepped.at(i) - stepped.at(0))).toEqual(Array.from({ length: stepped.length }, (_, i) => i * step));
          }
        }
        const due = dueTicks(recurrence, step, nextFireAt, now);
        for (const misfireGraceMs of GRACES) {
          for (const [policyName, shape, previousRunning] of POLICIES) {
            const policy = { ...shape, misfireGraceMs };
            const label = `${name}, down ${outage / HOUR} h until ${new Date(now).toISOString()}, grace ${misfireGraceMs / SECOND} s, ${policyName}`;
            const ticks = countingTicks();
            const plan = planMint(recurrence, policy, nextFireAt, now, previousRunning, { ...limits, nextFireAfter: ticks.next });
            // The planner reads the pattern only through the tick function it is given, and little of it.
            expect({ label, bounded: ticks.calls > 0 && ticks.calls <= bound }).toEqual({ label, bounded: true });
            expectMatchesReference(plan, reference(recurrence, policy, due, now, previousRunning, limits.maxMints), recurrence, limits.maxCounted, label);
          }
        }
      }
    }
  }, 120_000);

  it('at the default limits: the issue\'s settings return at once, and follow the policy exactly', () => {
    const cases: [string, Recurrence, number, number, number][] = [
      ['a per-minute cron with a 1-day grace after 16.7 h down', cron('* * * * *', 'UTC'), MINUTE, 1_002 * MINUTE, DAY],
      ['a per-second cron with a 1 h grace after 17 min down', cron('* * * * * *', 'UTC'), SECOND, 17 * MINUTE, HOUR],
      ['a per-second cron in Berlin with a 1-day grace after 10 years down', cron('* * * * * *', 'Europe/Berlin'), SECOND, 10 * YEAR, DAY],
      ['a per-second interval with a 1-day grace after 10 years down', every(SECOND), SECOND, 10 * YEAR, DAY],
    ];
    const bound = MINT_PLAN_MAX_MINTS + MINT_PLAN_MAX_COUNTED + 4 * 60 + 8;
    for (const [label, recurrence, step, outage, misfireGraceMs] of cases) {
      const now = ENDS[0]!;
      const nextFireAt = nextFireAfter(recurrence, now - outage)!;
      const due = arithmetic(nextFireAt, step, now);
      for (const [name, shape, previousRunning] of POLICIES) {
        const policy = { ...shape, misfireGraceMs };
        const ticks = countingTicks();
        const plan = planMint(recurrence, policy, nextFireAt, now, previousRunning, { nextFireAfter: ticks.next });
        expect({ label, name, bounded: ticks.calls > 0 && ticks.calls <= bound }).toEqual({ label, name, bounded: true });
        expectMatchesReference(plan, reference(recurrence, policy, due, now, previousRunning, MINT_PLAN_MAX_MINTS), recurrence, MINT_PLAN_MAX_COUNTED, `${label}, ${name}`);
      }
    }
  }, 120_000);

  it('mints what one plan allows, and the passes that follow mint the rest of the grace exactly once', () => {
    // A per-second cron with a 1 h grace after 17 min down: 1,021 ticks are within the grace.
    const recurrence = cron('* * * * * *', 'UTC');
    const policy: MintPolicy = { catchUp: 'skip', noOverlap: false, misfireGraceMs: HOUR };
    const now = ENDS[0]!;
    const first = nextFireAfter(recurrence, now - 17 * MINUTE)!;
    let nextFireAt = first;
    const minted: number[] = [];
    let passes = 0;
    while (nextFireAt <= now) {
      const plan = planMint(recurrence, policy, nextFireAt, now, false);
      expect(plan.mint.length).toBeLessThanOrEqual(MINT_PLAN_MAX_MINTS);
      expect(plan.skipped.count).toBe(0);
      minted.push(...plan.mint);
      nextFireAt = plan.nextFireAt!;
      passes += 1;
    }
    expect(passes).toBe(2);
    const all = enumerate(recurrence, first, now, 10_000)!;
    expect(minted).toEqual(Array.from({ length: all.length }, (_, i) => all.at(i)));
    expect(nextFireAt).toBe(nextFireAfter(recurrence, now));
  }, 120_000);
});
