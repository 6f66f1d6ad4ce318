import { describe, expect, it } from '@jest/globals';
import {
  checkRetryOverride,
  DEFAULT_RETRY_POLICY,
  effectiveRetryPolicy,
  InvalidArgumentError,
  resolveRetryPolicy,
  retryCeilingMs,
  retryDelayMs,
  SeededRandom,
  type RandomSource,
} from '../../lib/core/index.js';

const fixed = (value: number): RandomSource => ({ next: () => value });

describe('retry policy', () => {
  it('doubles the base once per failed attempt and caps at the maximum', () => {
    const ceilings = [1, 2, 3, 4, 5, 8, 9, 10].map((n) => retryCeilingMs(n, DEFAULT_RETRY_POLICY));
    expect(ceilings).toEqual([2_000, 4_000, 8_000, 16_000, 32_000, 256_000, 300_000, 300_000]);
    expect(retryCeilingMs(5_000, DEFAULT_RETRY_POLICY)).toBe(300_000);
  });

  it('without jitter waits exactly the ceiling', () => {
    const policy = { ...DEFAULT_RETRY_POLICY, jitter: false };
    expect([1, 2, 3].map((n) => retryDelayMs(n, policy, fixed(0.5)))).toEqual([2_000, 4_000, 8_000]);
  });

  it('with full jitter draws a whole number of ms from [0, ceiling], both ends reachable', () => {
    expect(retryDelayMs(1, DEFAULT_RETRY_POLICY, fixed(0))).toBe(0);
    expect(retryDelayMs(1, DEFAULT_RETRY_POLICY, fixed(0.999_999_9))).toBe(2_000);
    expect(retryDelayMs(1, DEFAULT_RETRY_POLICY, fixed(0.5))).toBe(1_000);
  });

  it('spreads jittered delays evenly over the range (seeded, so the check is exact every run)', () => {
    const random = new SeededRandom(7n);
    const draws = Array.from({ length: 20_000 }, () => retryDelayMs(3, DEFAULT_RETRY_POLICY, random));
    const buckets = [0, 0, 0, 0];
    for (const d of draws) {
      expect(Number.isInteger(d)).toBe(true);
      expect(d).toBeGreaterThanOrEqual(0);
      expect(d).toBeLessThanOrEqual(8_000);
      buckets[Math.min(3, Math.floor(d / 2_000))]! += 1;
    }
    for (const count of buckets) expect(Math.abs(count - 5_000)).toBeLessThan(300);
    const mean = draws.reduce((a, b) => a + b, 0) / draws.length;
    expect(Math.abs(mean - 4_000)).toBeLessThan(100);
  });

  it('replays the same delays from the same seed', () => {
    const a = new SeededRandom(99n);
    const b = new SeededRandom(99n);
    const seq = (r: SeededRandom) => [1, 2, 3, 4, 5, 6].map((n) => retryDelayMs(n, DEFAULT_RETRY_POLICY, r));
    expect(seq(a)).toEqual(seq(b));
    expect(seq(new SeededRandom(100n))).not.toEqual(seq(new SeededRandom(99n)));
  });

  it('fills defaults and refuses policies that cannot produce sane delays', () => {
    expect(resolveRetryPolicy({ baseDelayMs: 50 })).toEqual({ baseDelayMs: 50, maxDelayMs: 300_000, jitter: true });
    expect(resolveRetryPolicy(undefined)).toEqual(DEFAULT_RETRY_POLICY);
    expect(() => resolveRetryPolicy({ baseDelayMs: -1 })).toThrow(InvalidArgumentError);
    expect(() => resolveRetryPolicy({ baseDelayMs: Number.NaN })).toThrow(/retry.baseDelayMs must be a finite number/);
    expect(() => resolveRetryPolicy({ baseDelayMs: 10, maxDelayMs: 5 })).toThrow(/retry.maxDelayMs must be .* at or above baseDelayMs \(10\)/);
    expect(() => resolveRetryPolicy({ maxDelayMs: Number.POSITIVE_INFINITY })).toThrow(/retry.maxDelayMs/);
    expect(() => resolveRetryPolicy({ jitter: 'yes' as never })).toThrow(/retry.jitter must be true or false/);
  });
});

describe('issue 19 item 10: a retry override set at enqueue', () => {
  const handler = { baseDelayMs: 30_000, maxDelayMs: 600_000, jitter: true };

  it('keeps only the fields given, and wins over the handler field by field', () => {
    expect(checkRetryOverride(undefined)).toBeNull();
    expect(checkRetryOverride({})).toBeNull();
    expect(checkRetryOverride({ baseDelayMs: undefined })).toBeNull();
    expect(checkRetryOverride({ baseDelayMs: 0 })).toEqual({ baseDelayMs: 0 });
    expect(checkRetryOverride({ maxDelayMs: 5, jitter: false })).toEqual({ maxDelayMs: 5, jitter: false });
    expect(effectiveRetryPolicy(handler, null)).toBe(handler);
    expect(effectiveRetryPolicy(handler, { baseDelayMs: 0 })).toEqual({ baseDelayMs: 0, maxDelayMs: 600_000, jitter: true });
    // A cap below the handler's base is the ceiling: the delay never exceeds it.
    const capped = effectiveRetryPolicy(handler, { maxDelayMs: 5_000, jitter: false });
    expect(retryDelayMs(1, capped, fixed(0.5))).toBe(5_000);
    expect(retryDelayMs(3, effectiveRetryPolicy(handler, { baseDelayMs: 0 }), fixed(0.99))).toBe(0);
  });

  it('refuses unknown fields, here and in a @Job or module policy, naming the right ones', () => {
    expect(() => checkRetryOverride({ baseMs: 0 })).toThrow('retry.baseMs is not a retry option; the options are baseDelayMs, maxDelayMs and jitter.');
    expect(() => resolveRetryPolicy({ baseMs: 0 } as never)).toThrow(InvalidArgumentError);
    expect(() => checkRetryOverride({ baseDelayMs: 1e13 })).toThrow(/^retry\.baseDelayMs must be at most 3153600000000 milliseconds/);
    expect(() => checkRetryOverride({ baseDelayMs: 10, maxDelayMs: 5 })).toThrow(/at or above baseDelayMs \(10\), got 5\.$/);
    expect(() => checkRetryOverride(null, 'jobs[2].retry')).toThrow(/^jobs\[2\]\.retry must be an object/);
  });
});
