import { InvalidArgumentError } from './errors/index.js';
import { showKey, showValue } from './validation/job-fields.js';

/** Size bounds the library enforces. Sizes are UTF-8 bytes of JSON text; every bound is inclusive. */
export interface SchedulerLimits {
  /** Largest payload accepted at enqueue. Default 256 KiB. */
  readonly maxPayloadBytes: number;
  /** Largest output a handler may store. Larger output is refused, never truncated. Default 64 KiB. */
  readonly maxOutputBytes: number;
  /**
   * Largest value a handler may report with `reportProgress`. Larger values are refused, never
   * truncated. Default 4 KiB: progress is written on every heartbeat, so it is kept small.
   */
  readonly maxProgressBytes: number;
  /** Longest wire name, in characters. Default 128. */
  readonly maxNameLength: number;
  /** Error text kept per job; longer text is cut on a UTF-8 boundary. Default 8 KiB. */
  readonly maxErrorBytes: number;
  /**
   * Deepest nesting of arrays and objects in a payload or output. Default 64, at most
   * {@link MAX_JSON_DEPTH_CEILING}: deeper JSON than that is not kept by every store and tool.
   */
  readonly maxJsonDepth: number;
  /** Highest `maxAttempts` a job may ask for. Default 10,000. */
  readonly maxAttemptsCeiling: number;
}

/** The size limits a store applies when none are given (docs/bad-input.md). */
export const DEFAULT_LIMITS: SchedulerLimits = Object.freeze({
  maxPayloadBytes: 256 * 1024,
  maxOutputBytes: 64 * 1024,
  maxProgressBytes: 4 * 1024,
  maxNameLength: 128,
  maxErrorBytes: 8 * 1024,
  maxJsonDepth: 64,
  maxAttemptsCeiling: 10_000,
});

/**
 * The highest `maxJsonDepth` a store accepts. SQLite's JSON functions stop at 1,000 levels,
 * PostgreSQL's jsonb input runs out of stack between 10,000 and 20,000, and JSON.stringify (which
 * consumers call on what they read back) at about 4,000; a larger limit would promise payloads
 * that a store then fails to write, or a reader fails to print.
 */
export const MAX_JSON_DEPTH_CEILING = 1_000;

/**
 * The highest `maxAttemptsCeiling` a store accepts. PostgreSQL and MySQL keep `max_attempts` in a
 * 32-bit integer (at most 2,147,483,647), and each snooze adds one to it (at most 100,000 per job
 * between replays), so a ceiling above this would promise budgets a store then fails to write.
 */
export const MAX_ATTEMPTS_CEILING_LIMIT = 2_000_000_000;

/** Fills in defaults; each bound must be a positive whole number. */
export function resolveLimits(partial?: Partial<SchedulerLimits>): SchedulerLimits {
  const limits = { ...DEFAULT_LIMITS };
  if (partial !== undefined && (partial === null || typeof partial !== 'object' || Array.isArray(partial))) {
    throw new InvalidArgumentError(`limits must be an object of size limits, got ${showValue(partial)}.`, 'limits');
  }
  for (const [key, value] of Object.entries(partial ?? {})) {
    if (value === undefined) continue;
    if (!(key in DEFAULT_LIMITS)) {
      throw new InvalidArgumentError(`limits.${showKey(key)} is not a known limit; known limits are ${Object.keys(DEFAULT_LIMITS).join(', ')}.`, `limits.${key}`);
    }
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
      throw new InvalidArgumentError(`limits.${key} must be a whole number of at least 1, got ${showValue(value)}.`, `limits.${key}`);
    }
    if (key === 'maxJsonDepth' && value > MAX_JSON_DEPTH_CEILING) {
      throw new InvalidArgumentError(`limits.maxJsonDepth must be at most ${MAX_JSON_DEPTH_CEILING}, which every store keeps, got ${value}.`, `limits.${key}`);
    }
    if (key === 'maxAttemptsCeiling' && value > MAX_ATTEMPTS_CEILING_LIMIT) {
      throw new InvalidArgumentError(`limits.maxAttemptsCeiling must be at most ${MAX_ATTEMPTS_CEILING_LIMIT}, which every store keeps with room for snoozes, got ${value}.`, `limits.${key}`);
    }
    (limits as Record<string, number>)[key] = value;
  }
  return Object.freeze(limits);
}
