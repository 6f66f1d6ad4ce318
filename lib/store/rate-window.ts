import type { Rate } from './enqueue-input.types.js';

/**
 * A rate limit's bookkeeping as every store keeps it: `max` starts, each the time (ms) of the last
 * claim that used it, or -Infinity while unused. A claim takes a start only once `perMs` has passed
 * since its last use and stamps it with the claim's time, so two uses of one start are always at
 * least a window apart and no window of `perMs` can hold more than `max` starts.
 */
export interface RateWindow extends Rate {
  readonly starts: number[];
}

/** A new limit: `max` unused starts. */
export function newRateWindow(rate: Rate): RateWindow {
  return { ...rate, starts: Array.from({ length: rate.max }, () => Number.NEGATIVE_INFINITY) };
}

/**
 * The limit changed to `rate`: a raised max adds unused starts; a lowered one keeps the most recent
 * (a start kept is never older than one dropped, so no new start can share a window with a dropped
 * one); a changed window applies to the starts already counted.
 */
export function resizeRateWindow(window: RateWindow, rate: Rate): RateWindow {
  const recentFirst = [...window.starts].sort((a, b) => b - a).slice(0, rate.max);
  while (recentFirst.length < rate.max) recentFirst.push(Number.NEGATIVE_INFINITY);
  return { ...rate, starts: recentFirst };
}

/** Starts usable at `now`. */
export function freeStarts(window: RateWindow, now: number): number {
  return window.starts.filter((at) => at + window.perMs <= now).length;
}

/** Uses the longest-unused start at `now`; the caller has checked {@link freeStarts}. */
export function useStart(window: RateWindow, now: number): void {
  let oldest = 0;
  for (let i = 1; i < window.starts.length; i += 1) if (window.starts[i]! < window.starts[oldest]!) oldest = i;
  window.starts[oldest] = now;
}

/** Starts in the window that ends at `now`, and when the next one frees while all are used. */
export function rateWindowStatus(window: RateWindow, now: number): { startsInWindow: number; fullUntil: number | null } {
  const used = window.starts.filter((at) => at + window.perMs > now);
  const fullUntil = used.length < window.max ? null : Math.min(...used) + window.perMs;
  return { startsInWindow: used.length, fullUntil };
}
