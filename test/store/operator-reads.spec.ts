import { describe, expect, it } from '@jest/globals';
import { canonicalIdPrefix, MAX_THROUGHPUT_BUCKETS, throughputResult, throughputWindow, toObserverStatus } from '../../lib/store/index.js';

const MINUTE = 60_000;

describe('the pieces every store shares for its operator reads', () => {
  it('canonicalIdPrefix accepts the start of a UUID with or without its hyphens, and nothing else', () => {
    expect(canonicalIdPrefix('0190A5A0')).toBe('0190a5a0');
    expect(canonicalIdPrefix('0190a5a0-')).toBe('0190a5a0');
    expect(canonicalIdPrefix('0190a5a00000')).toBe('0190a5a0-0000');
    expect(canonicalIdPrefix('0190a5a0-0000-7')).toBe('0190a5a0-0000-7');
    expect(canonicalIdPrefix('0190a5a0-0000-7000-8000-00000000beef')).toBe('0190a5a0-0000-7000-8000-00000000beef');
    for (const bad of ['', '-', 'g', '0190-a5a0', '0190a5a0--', '0190a5a0-0000-7000-8000-00000000beef0', "0' or 1=1", '0190a5a0 ']) {
      expect(canonicalIdPrefix(bad)).toBeNull();
    }
  });

  it('throughputWindow keeps the newest buckets up to the one holding now', () => {
    expect(throughputWindow(0, MINUTE, 0)).toEqual({ from: 0, buckets: 1 });
    expect(throughputWindow(0, MINUTE, MINUTE - 1)).toEqual({ from: 0, buckets: 1 });
    expect(throughputWindow(0, MINUTE, MINUTE)).toEqual({ from: 0, buckets: 2 });
    expect(throughputWindow(MINUTE, MINUTE, 0)).toEqual({ from: MINUTE, buckets: 0 });
    expect(throughputWindow(0, MINUTE, 2_000 * MINUTE)).toEqual({ from: (2_001 - MAX_THROUGHPUT_BUCKETS) * MINUTE, buckets: MAX_THROUGHPUT_BUCKETS });
  });

  it('throughputResult fills empty buckets, and marks counts partial up to where a capped source stopped', () => {
    const params = { since: 0, bucketMs: MINUTE, queue: null, scan: 10 };
    const full = { rows: 10, oldest: 2 * MINUTE + 5 };
    const short = { rows: 3, oldest: MINUTE };
    const counts = [
      { bucket: 0, state: 'cancelled' as const, count: 1 },
      { bucket: 2, state: 'succeeded' as const, count: 9 },
      { bucket: 2, state: 'dead_lettered' as const, count: 2 },
      { bucket: 7, state: 'succeeded' as const, count: 4 },
    ];
    const result = throughputResult(params, { counts, read: { done: full, dead: short }, now: 3 * MINUTE + 1 });
    expect(result.buckets).toEqual([
      { start: new Date(0), succeeded: 0, deadLettered: 0, cancelled: 1 },
      { start: new Date(MINUTE), succeeded: 0, deadLettered: 0, cancelled: 0 },
      { start: new Date(2 * MINUTE), succeeded: 9, deadLettered: 2, cancelled: 0 },
      { start: new Date(3 * MINUTE), succeeded: 0, deadLettered: 0, cancelled: 0 },
    ]);
    expect(result.partialUntil).toEqual(new Date(2 * MINUTE + 5));
    // The later of two stops bounds what is complete; no stop, nothing partial.
    const both = throughputResult(params, { counts: [], read: { done: full, dead: { rows: 10, oldest: 3 * MINUTE } }, now: 3 * MINUTE + 1 });
    expect(both.partialUntil).toEqual(new Date(3 * MINUTE));
    expect(throughputResult(params, { counts: [], read: { done: short, dead: short }, now: 3 * MINUTE }).partialUntil).toBeNull();
  });

  it('toObserverStatus cuts a lag counted one past the cap to the cap, and says it was capped', () => {
    const row = {
      observer: 'o',
      position: '7',
      leasedBy: null,
      leasedUntil: null,
      failures: 0,
      retryAt: null,
      lastError: null,
      updatedAt: new Date(0),
      oldestUndeliveredAt: null,
    };
    expect(toObserverStatus({ ...row, lag: 0 }, 10)).toEqual({ ...row, lagEntries: 0, lagCapped: false });
    expect(toObserverStatus({ ...row, lag: 10 }, 10)).toMatchObject({ lagEntries: 10, lagCapped: false });
    expect(toObserverStatus({ ...row, lag: 11 }, 10)).toMatchObject({ lagEntries: 10, lagCapped: true });
    expect('lag' in toObserverStatus({ ...row, lag: 11 }, 10)).toBe(false);
  });
});
