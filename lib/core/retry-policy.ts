import { InvalidArgumentError } from './errors/index.js';
import { MAX_DELAY_MS, showValue } from './validation/job-fields.js';
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

/** Fills in defaults and refuses a policy that cannot produce sane delays. */
export function resolveRetryPolicy(partial: Partial<RetryPolicy> | undefined, base: RetryPolicy = DEFAULT_RETRY_POLICY, argument = 'retry'): RetryPolicy {
  if (partial !== undefined && partial !== null && (typeof partial !== 'object' || Array.isArray(partial))) {
    throw new InvalidArgumentError(`${argument} must be an object with baseDelayMs, maxDelayMs and jitter, got ${showValue(partial)}.`, argument);
  }
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

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
