import { describe, expect, it } from '@jest/globals';
import { ManualClock, SeededRandom } from '../../lib/core/index.js';

describe('SeededRandom', () => {
  it('replays the same sequence from the same 64-bit seed', () => {
    const a = new SeededRandom(0xdead_beef_cafe_f00dn);
    const b = new SeededRandom(0xdead_beef_cafe_f00dn);
    expect(Array.from({ length: 100 }, () => a.next())).toEqual(Array.from({ length: 100 }, () => b.next()));
  });

  it('uses every bit of the seed: seeds that differ only in the high word diverge', () => {
    const low = new SeededRandom(1n);
    const high = new SeededRandom(1n | (1n << 63n));
    expect(Array.from({ length: 8 }, () => low.nextUint32())).not.toEqual(Array.from({ length: 8 }, () => high.nextUint32()));
  });

  it('stays in [0, 1) and covers it', () => {
    const r = new SeededRandom(0);
    let min = 1;
    let max = 0;
    for (let i = 0; i < 50_000; i++) {
      const x = r.next();
      min = Math.min(min, x);
      max = Math.max(max, x);
    }
    expect(min).toBeGreaterThanOrEqual(0);
    expect(min).toBeLessThan(0.001);
    expect(max).toBeLessThan(1);
    expect(max).toBeGreaterThan(0.999);
    expect(new SeededRandom(5).nextInt(10)).toBeLessThan(10);
  });
});

describe('ManualClock', () => {
  it('moves only when told to, and never backwards', () => {
    const clock = new ManualClock(1_000);
    expect(clock.now()).toBe(1_000);
    clock.advance(250);
    expect(clock.now()).toBe(1_250);
    clock.set(2_000);
    expect(clock.now()).toBe(2_000);
    expect(() => clock.set(1_999)).toThrow(RangeError);
    expect(() => clock.advance(-1)).toThrow(RangeError);
    expect(() => clock.advance(Number.NaN)).toThrow(RangeError);
  });
});
