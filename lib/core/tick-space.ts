import type { Recurrence } from './recurrence.js';

/** The tick function the planner reads a recurrence through: the first fire time strictly after `after`. */
export type NextFireAfter = (recurrence: Recurrence, after: number) => number | null;

/** What a scan of the ticks in a range learned. */
export interface TickScan {
  /** Ticks in the range; a lower bound when `exact` is false. */
  readonly count: number;
  readonly exact: boolean;
  /** The latest tick in the range (null when it holds none). */
  readonly last: number | null;
  /** The tick before `last` in the range, or null when `last` is the first. */
  readonly penultimate: () => number | null;
}

/** The first ticks of a range, in order, and the tick that follows them (which may lie past the range). */
export interface TickList {
  readonly ticks: readonly number[];
  readonly after: number | null;
}

const SECOND = 1_000;

export const EMPTY_SCAN: TickScan = { count: 0, exact: true, last: null, penultimate: () => null };

/**
 * Reads the ticks of one recurrence in ranges, with work bounded by the `limit` it is given and
 * never by the length of the range: intervals by arithmetic, cron patterns by stepping through at
 * most `limit` ticks and finding a range's last tick by a galloping search. The search relies on
 * one property of the tick function, that it is monotone (a later `after` never gives an earlier
 * tick), which makes it agree with stepping one by one.
 */
export interface TickSpace {
  next(after: number): number | null;
  /** The latest tick before `before`, given a tick `from` that lies before it. */
  lastBefore(before: number, from: number): number;
  /** The ticks from the tick `from` through `last` (inclusive), counting at most `limit` one by one. */
  scan(from: number, last: number, limit: number): TickScan;
  /** The first `limit` ticks from the tick `from` through `last` (inclusive). */
  list(from: number, last: number, limit: number): TickList;
}

export function tickSpace(recurrence: Recurrence, nextFireAfter: NextFireAfter): TickSpace {
  const next = (after: number) => nextFireAfter(recurrence, after);
  // Cron ticks fall on whole seconds, so the search steps in seconds. It gallops back from
  // `before` (a fine pattern's last tick is a step or two away) and then bisects: the smallest
  // whole second x in [from, before) whose next tick is at or past `before` is the last tick
  // before it. A few calls for a per-second pattern, about 35 for a daily one, under 60 for a
  // yearly one.
  const lastBefore = (before: number, from: number): number => {
    // A start off the whole second (never seen from croner) falls back to milliseconds.
    const grain = from % SECOND === 0 ? SECOND : 1;
    let hi = Math.ceil(before / grain) * grain - grain;
    let lo = from;
    for (let step = grain; hi - step > from; step *= 2) {
      const probe = hi - step;
      const after = next(probe);
      if (after !== null && after < before) {
        lo = probe;
        break;
      }
      hi = probe;
    }
    while (lo < hi) {
      const mid = lo + Math.floor((hi - lo) / (2 * grain)) * grain;
      const after = next(mid);
      if (after === null || after >= before) hi = mid;
      else lo = mid + grain;
    }
    return lo;
  };
  const list = (from: number, last: number, limit: number): TickList => {
    const ticks = [from];
    let after = next(from);
    while (ticks.length < limit && after !== null && after <= last) {
      ticks.push(after);
      after = next(after);
    }
    return { ticks, after };
  };
  if (recurrence.kind === 'interval') return intervalSpace(recurrence.intervalMs, next, list);
  return {
    next,
    lastBefore,
    list,
    scan(from, last, limit) {
      let count = 1;
      let previous: number | null = null;
      let tick = from;
      for (;;) {
        const after = next(tick);
        if (after === null || after > last) return { count, exact: true, last: tick, penultimate: () => previous };
        if (count >= limit) {
          // More ticks than we step through: the last one comes from the search, and the count is
          // what we stepped through plus `after`, which we saw but did not step past.
          const end = lastBefore(last + 1, after);
          return { count: count + 1, exact: false, last: end, penultimate: () => lastBefore(end, from) };
        }
        previous = tick;
        tick = after;
        count += 1;
      }
    },
  };
}

/**
 * Ticks of a fixed interval: `anchorAt + k × intervalMs`. The range's first tick is taken as
 * given (a stored `nextFireAt`), and the ones after it come from the tick function, so the count
 * and the last tick are the ones stepping one by one would find.
 */
function intervalSpace(intervalMs: number, next: (after: number) => number | null, list: TickSpace['list']): TickSpace {
  return {
    next,
    lastBefore: (before, from) => {
      const second = next(from);
      if (second === null || second >= before) return from;
      return second + Math.floor((Math.ceil(before) - 1 - second) / intervalMs) * intervalMs;
    },
    list,
    scan(from, last) {
      const second = next(from);
      if (second === null || second > last) return { count: 1, exact: true, last: from, penultimate: () => null };
      const steps = Math.floor((last - second) / intervalMs);
      const end = second + steps * intervalMs;
      return { count: steps + 2, exact: true, last: end, penultimate: () => (steps === 0 ? from : end - intervalMs) };
    },
  };
}
