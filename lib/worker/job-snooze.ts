import { assertDelayMs, InvalidArgumentError, showValue } from '../core/index.js';

/** The default of `@Job({ maxSnoozes })`: how many times one job may snooze before it is dead-lettered. */
export const DEFAULT_MAX_SNOOZES = 100;
/** The highest `maxSnoozes` a handler may set. */
export const MAX_SNOOZES_CEILING = 100_000;

/**
 * What `ctx.snooze(delayMs)` returns, for the handler to return in turn: the attempt ends without
 * an error and the job runs again after `delayMs`, without spending its retry budget
 * (docs/snooze.md). The call is what snoozes: a value of this shape that a handler builds itself
 * and returns does nothing.
 */
export interface JobSnooze {
  /** How long the job waits before it may run again, in whole milliseconds. */
  readonly delayMs: number;
}

/** Checks a snooze's delay: whole milliseconds, rounded up, at or above 0. */
export function snoozeOf(delayMs: unknown): JobSnooze {
  return Object.freeze({ delayMs: assertDelayMs(delayMs, 'ctx.snooze delayMs') });
}

/** Checks a handler's `maxSnoozes`: a whole number from 0 (never snooze) to {@link MAX_SNOOZES_CEILING}. */
export function assertMaxSnoozes(value: unknown, argument = 'maxSnoozes'): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > MAX_SNOOZES_CEILING) {
    throw new InvalidArgumentError(`${argument} must be a whole number from 0 to ${MAX_SNOOZES_CEILING}, got ${showValue(value)}.`, argument);
  }
  return value;
}

/** The last error of a job dead-lettered because it asked for one snooze more than its handler allows. */
export function snoozeLimitError(snoozes: number, maxSnoozes: number): string {
  if (maxSnoozes === 0) return 'asked to snooze, which its handler does not allow (maxSnoozes 0); raise maxSnoozes, then replay the job';
  return `asked to snooze again after ${snoozes} ${snoozes === 1 ? 'snooze' : 'snoozes'}, the most its handler allows (maxSnoozes ${maxSnoozes}); raise maxSnoozes, then replay the job`;
}
