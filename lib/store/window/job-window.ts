import { assertNonEmptyString, assertPositiveInteger, checkOptions, InvalidArgumentError, showValue } from '../../core/index.js';
import type { DebounceOptions, ThrottleOptions } from '../enqueue-input.types.js';

/** The longest debounce or throttle window, and the longest debounce delay: 30 days. */
export const MAX_WINDOW_MS = 2_592_000_000;
/** A debounce's `maxDelayMs` when none is given: ten windows (at most {@link MAX_WINDOW_MS}). */
export const DEFAULT_DEBOUNCE_WINDOWS = 10;
/** Longest debounce or throttle key, in characters (the same as a unique key). */
export const MAX_WINDOW_KEY = 200;

/** Which window a job opened. */
export type WindowKind = 'debounce' | 'throttle';

/**
 * The debounce or throttle window a new job carries, as a store writes it. The window's end is
 * `endsInMs` after the store's clock at the insert: the latest run time for a debounce, the end of
 * the dropping for a throttle.
 */
export interface JobWindow {
  readonly kind: WindowKind;
  readonly key: string;
  /** The quiet time a debounce waits for; the throttle's window. */
  readonly windowMs: number;
  /** From the insert to the window's end: `maxDelayMs` for a debounce, `windowMs` for a throttle. */
  readonly endsInMs: number;
}

/** The fields of an enqueue a window cannot be combined with, by window kind. */
const EXCLUSIVE: Record<WindowKind, readonly string[]> = {
  // A debounced job's run time is its window's: a run time of its own would say otherwise.
  debounce: ['runAt', 'delayMs', 'uniqueKey', 'dependsOn'],
  throttle: ['uniqueKey', 'dependsOn'],
};

/**
 * Checks an enqueue's `debounce` or `throttle` option (at most one of them) and gives the window
 * to store, or null when it has neither. `fields` are the enqueue's own, read once.
 */
export function normalizeWindow(fields: Readonly<Record<string, unknown>>, where: string): JobWindow | null {
  const debounce = fields.debounce;
  const throttle = fields.throttle;
  if (debounce !== undefined && throttle !== undefined) {
    throw new InvalidArgumentError(`${where}debounce and ${where}throttle cannot both be set; pick one.`, `${where}debounce`);
  }
  if (debounce === undefined && throttle === undefined) return null;
  const kind: WindowKind = debounce !== undefined ? 'debounce' : 'throttle';
  for (const field of EXCLUSIVE[kind]) {
    if (fields[field] !== undefined) throw new InvalidArgumentError(`${where}${kind} cannot be combined with ${where}${field}.`, `${where}${kind}`);
  }
  return kind === 'debounce' ? debounceWindow(debounce, `${where}debounce`) : throttleWindow(throttle, `${where}throttle`);
}

function debounceWindow(value: unknown, argument: string): JobWindow {
  const given = checkOptions(value as DebounceOptions, ['key', 'windowMs', 'maxDelayMs'], { what: 'debounce', argument, where: `${argument}.` })!;
  const { key, windowMs, maxDelayMs } = given;
  const window = assertPositiveInteger(windowMs, `${argument}.windowMs`, MAX_WINDOW_MS);
  const cap =
    maxDelayMs === undefined ? Math.min(window * DEFAULT_DEBOUNCE_WINDOWS, MAX_WINDOW_MS) : assertPositiveInteger(maxDelayMs, `${argument}.maxDelayMs`, MAX_WINDOW_MS);
  if (cap < window) {
    throw new InvalidArgumentError(`${argument}.maxDelayMs must be at least windowMs (${window}), got ${showValue(cap)}.`, `${argument}.maxDelayMs`);
  }
  return { kind: 'debounce', key: assertNonEmptyString(key, `${argument}.key`, MAX_WINDOW_KEY), windowMs: window, endsInMs: cap };
}

function throttleWindow(value: unknown, argument: string): JobWindow {
  const given = checkOptions(value as ThrottleOptions, ['key', 'windowMs'], { what: 'throttle', argument, where: `${argument}.` })!;
  const { key, windowMs } = given;
  const window = assertPositiveInteger(windowMs, `${argument}.windowMs`, MAX_WINDOW_MS);
  return { kind: 'throttle', key: assertNonEmptyString(key, `${argument}.key`, MAX_WINDOW_KEY), windowMs: window, endsInMs: window };
}
