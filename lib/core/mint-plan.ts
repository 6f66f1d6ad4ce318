import { nextFireAfter, type Recurrence } from './recurrence.js';
import { EMPTY_SCAN, tickSpace, type NextFireAfter } from './tick-space.js';

/** Why a tick produced no job. */
export type SkipReason = 'missed' | 'overlap';

/** How a recurring schedule treats ticks it missed or that would overlap. */
export interface MintPolicy {
  /** `skip` drops ticks missed during downtime; `coalesce` runs them as one make-up job. */
  readonly catchUp: 'skip' | 'coalesce';
  /** Do not mint while the previous occurrence is still not terminal. */
  readonly noOverlap: boolean;
  /** A tick first seen more than this long after its fire time counts as missed. */
  readonly misfireGraceMs: number;
}

/** What one minting pass does for a schedule: the ticks to mint, skip and where to resume. */
export interface MintPlan {
  /** The fire times to mint a job for, oldest first. */
  readonly mint: readonly number[];
  /**
   * Ticks that got no job, and why, and the latest of them. `count` is exact for intervals and
   * for cron gaps of up to {@link MINT_PLAN_MAX_COUNTED} ticks; past that a cron count is a lower
   * bound (the gap is not stepped through tick by tick) and `lowerBound` is set.
   */
  readonly skipped: { readonly count: number; readonly last: number | null; readonly reason: SkipReason | null; readonly lowerBound?: true };
  /**
   * Where the schedule stands after the plan: the next fire time after `now`, or null if it
   * never fires again. When more ticks were due within the grace than one plan mints, this is
   * the first of those left over (at or before `now`): the schedule stays due, and the next pass
   * mints them, judging each by its own clock as any tick first seen then.
   */
  readonly nextFireAt: number | null;
}

/** Most jobs one plan mints for one schedule. */
export const MINT_PLAN_MAX_MINTS = 1_000;
/** Most ticks one plan steps through one by one to count those it will not mint. */
export const MINT_PLAN_MAX_COUNTED = 1_000;

/** Limits and instruments for {@link planMint}; the defaults are what the stores use. */
export interface MintPlanOptions {
  readonly maxMints?: number;
  readonly maxCounted?: number;
  /** The tick function (default {@link nextFireAfter}); a store or test passes a counting one. */
  readonly nextFireAfter?: NextFireAfter;
}

/**
 * Decides, purely, what a due schedule mints at `now`: the ticks from `nextFireAt` through
 * `now`, split into those missed (more than the misfire grace old) and those within it, then
 * shaped by the catch-up policy and `noOverlap`. `previousRunning` says whether the last minted
 * occurrence is still not terminal.
 *
 * Its work is bounded whatever the outage: it goes straight to the start of the grace window
 * instead of walking the gap, counts missed interval ticks arithmetically, steps through at most
 * `maxCounted` missed cron ticks, and mints at most `maxMints` ticks, about 2,100 calls of the
 * tick function at the defaults (docs/schedules.md).
 */
export function planMint(recurrence: Recurrence, policy: MintPolicy, nextFireAt: number, now: number, previousRunning: boolean, options: MintPlanOptions = {}): MintPlan {
  const ticks = tickSpace(recurrence, options.nextFireAfter ?? nextFireAfter);
  const maxMints = Math.max(1, options.maxMints ?? MINT_PLAN_MAX_MINTS);
  const maxCounted = Math.max(1, options.maxCounted ?? MINT_PLAN_MAX_COUNTED);
  // Ticks are whole milliseconds, so "at or before now" is "at or before floor(now)".
  const at = Math.floor(now);
  if (nextFireAt > at) return { mint: [], skipped: { count: 0, last: null, reason: null }, nextFireAt: ticks.next(at) };

  // A tick at or after graceStart is within the grace (now − tick ≤ grace); an earlier one is missed.
  const graceStart = at - policy.misfireGraceMs;
  const missed = nextFireAt < graceStart ? ticks.scan(nextFireAt, graceStart - 1, maxCounted) : EMPTY_SCAN;
  const firstInGrace = missed.last === null ? nextFireAt : ticks.next(missed.last);
  const anyInGrace = firstInGrace !== null && firstInGrace <= at;
  const coalesced = policy.catchUp === 'coalesce' && missed.count > 0;

  if (!coalesced && !policy.noOverlap) {
    // Every tick within the grace runs, oldest first, at most maxMints of them in this plan.
    const due = anyInGrace ? ticks.list(firstInGrace, at, maxMints) : { ticks: [], after: firstInGrace };
    return { mint: due.ticks, skipped: skippedOf(missed.count, missed.exact, missed.last), nextFireAt: due.after };
  }

  // At most one job: the latest due tick, as the make-up run (coalesce) or as the one that does
  // not overlap the others (noOverlap). Everything before it is counted, not listed.
  const grace = anyInGrace ? ticks.scan(firstInGrace, at, maxCounted) : EMPTY_SCAN;
  const lastDue = (grace.last ?? missed.last)!;
  const beforeLast = () => (grace.count >= 2 ? grace.penultimate() : grace.count === 1 ? missed.last : missed.penultimate());
  const exact = missed.exact && grace.exact;
  const candidates = coalesced ? 1 : grace.count;
  let count = coalesced ? missed.count + grace.count - 1 : missed.count;
  let reason: SkipReason | null = count > 0 ? 'missed' : null;
  let mint = candidates > 0 ? [lastDue] : [];
  let last = count === 0 ? null : coalesced ? beforeLast() : missed.last;
  if (policy.noOverlap && candidates > 0 && (previousRunning || candidates > 1)) {
    // Overlap with the previous occurrence, or with each other: keep at most the latest.
    count += previousRunning ? candidates : candidates - 1;
    reason = 'overlap';
    mint = previousRunning ? [] : [lastDue];
    last = previousRunning ? lastDue : beforeLast();
  }
  const skipped = { ...skippedOf(count, exact, last), reason };
  return { mint, skipped, nextFireAt: ticks.next(at) };
}

function skippedOf(count: number, exact: boolean, last: number | null): MintPlan['skipped'] {
  if (count === 0) return { count: 0, last: null, reason: null };
  return exact ? { count, last, reason: 'missed' } : { count, last, reason: 'missed', lowerBound: true };
}
