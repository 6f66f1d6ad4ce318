import { InvalidArgumentError } from './errors/index.js';
import { MAX_DELAY_MS, showKey, showValue } from './validation/job-fields.js';
import type { RandomSource } from './random.js';

/** How long to wait before the next attempt after one fails. */
export interface RetryPolicy {
  /** The delay before doubling; after attempt 1 the ceiling is twice this. Default 1 s. */
  readonly baseDelayMs: number;
  /** The ceiling's cap. Default 300 s. */
  readonly maxDelayMs: number;
  /** Draw the delay uniformly from [0, ceiling] (full jitter). Default on. */
  readonly jitter: boolean;
}

/** 1 s doubling per attempt up to 5 min, with full jitter: the policy of a job that sets none. */
export const DEFAULT_RETRY_POLICY: RetryPolicy = Object.freeze({
  baseDelayMs: 1_000,
  maxDelayMs: 300_000,
  jitter: true,
});

/**
 * The ceiling after attempt `attempt` failed: `min(baseDelayMs * 2^attempt, maxDelayMs)`.
 * The base doubles once per attempt, so the first retry waits up to twice the base.
 */
export function retryCeilingMs(attempt: number, policy: RetryPolicy): number {
  const ceiling = policy.baseDelayMs * 2 ** attempt;
  return Math.min(ceiling, policy.maxDelayMs);
}

/**
 * The delay before retrying after attempt `attempt` failed. With jitter the delay is a whole number
 * of milliseconds drawn uniformly from [0, ceiling], which spreads a burst of failures apart.
 */
export function retryDelayMs(attempt: number, policy: RetryPolicy, random: RandomSource): number {
  const ceiling = Math.floor(retryCeilingMs(attempt, policy));
  if (!policy.jitter) return ceiling;
  return Math.min(ceiling, Math.floor(random.next() * (ceiling + 1)));
}

const RETRY_KEYS = new Set(['baseDelayMs', 'maxDelayMs', 'jitter']);

/** Fills in defaults and refuses a policy that cannot produce sane delays. */
export function resolveRetryPolicy(partial: Partial<RetryPolicy> | undefined, base: RetryPolicy = DEFAULT_RETRY_POLICY, argument = 'retry'): RetryPolicy {
  if (partial !== undefined && partial !== null && (typeof partial !== 'object' || Array.isArray(partial))) {
    throw new InvalidArgumentError(`${argument} must be an object with baseDelayMs, maxDelayMs and jitter, got ${showValue(partial)}.`, argument);
  }
  refuseUnknownRetryKeys(partial ?? {}, argument);
  const policy: RetryPolicy = { ...base, ...stripUndefined(partial ?? {}) };
  const { baseDelayMs, maxDelayMs, jitter } = policy;
  if (typeof baseDelayMs !== 'number' || !Number.isFinite(baseDelayMs) || baseDelayMs < 0) {
    throw new InvalidArgumentError(`${argument}.baseDelayMs must be a finite number of milliseconds at or above 0, got ${showValue(baseDelayMs)}.`, `${argument}.baseDelayMs`);
  }
  if (typeof maxDelayMs !== 'number' || !Number.isFinite(maxDelayMs) || maxDelayMs < baseDelayMs) {
    throw new InvalidArgumentError(`${argument}.maxDelayMs must be a finite number of milliseconds at or above baseDelayMs (${baseDelayMs}), got ${showValue(maxDelayMs)}.`, `${argument}.maxDelayMs`);
  }
  if (maxDelayMs > MAX_DELAY_MS) {
    // Every store must be able to add the delay to its clock; see MAX_DELAY_MS.
    throw new InvalidArgumentError(`${argument}.maxDelayMs must be at most ${MAX_DELAY_MS} milliseconds (100 years), got ${showValue(maxDelayMs)}.`, `${argument}.maxDelayMs`);
  }
  if (typeof jitter !== 'boolean') {
    throw new InvalidArgumentError(`${argument}.jitter must be true or false, got ${showValue(jitter)}.`, `${argument}.jitter`);
  }
  return Object.freeze(policy);
}

/**
 * Checks a retry override given for one job (at enqueue) and keeps only the fields it sets. The
 * fields it leaves out come from the handler's policy on the node that runs the attempt, so they
 * are not known here: each given field is checked on its own, and `maxDelayMs` against
 * `baseDelayMs` only when both are given. Returns null for an override that sets nothing.
 */
export function checkRetryOverride(value: unknown, argument = 'retry'): Partial<RetryPolicy> | null {
  if (value === undefined) return null;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new InvalidArgumentError(`${argument} must be an object with some of baseDelayMs, maxDelayMs and jitter, got ${showValue(value)}.`, argument);
  }
  refuseUnknownRetryKeys(value, argument);
  const given = stripUndefined(value as Partial<RetryPolicy>);
  if (Object.keys(given).length === 0) return null;
  if (typeof given.baseDelayMs === 'number' && given.baseDelayMs > MAX_DELAY_MS) {
    throw new InvalidArgumentError(`${argument}.baseDelayMs must be at most ${MAX_DELAY_MS} milliseconds (100 years), got ${showValue(given.baseDelayMs)}.`, `${argument}.baseDelayMs`);
  }
  const checked = resolveRetryPolicy(given, { baseDelayMs: given.baseDelayMs ?? 0, maxDelayMs: given.maxDelayMs ?? MAX_DELAY_MS, jitter: true }, argument);
  const override: { -readonly [K in keyof RetryPolicy]?: RetryPolicy[K] } = {};
  for (const key of ['baseDelayMs', 'maxDelayMs', 'jitter'] as const) if (key in given) (override as Record<string, unknown>)[key] = checked[key];
  return Object.freeze(override);
}

/**
 * The policy an attempt's failure is retried by: the job's own override (set at enqueue) field by
 * field over the handler's policy. A merged `maxDelayMs` below `baseDelayMs` is not an error: the
 * ceiling is capped by `maxDelayMs`, so the delay is at most that.
 */
export function effectiveRetryPolicy(handler: RetryPolicy, override: Partial<RetryPolicy> | null | undefined): RetryPolicy {
  return override ? { ...handler, ...override } : handler;
}

function refuseUnknownRetryKeys(value: object, argument: string): void {
  for (const key of Object.keys(value)) {
    if (!RETRY_KEYS.has(key)) {
      throw new InvalidArgumentError(`${argument}.${showKey(key)} is not a retry option; the options are baseDelayMs, maxDelayMs and jitter.`, `${argument}.${key}`);
    }
  }
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
