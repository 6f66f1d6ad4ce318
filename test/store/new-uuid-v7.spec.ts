import { describe, expect, it } from '@jest/globals';
import { parse, validate, version } from 'uuid';
import { newUuidV7 } from '../../lib/store/new-uuid-v7.js';

const timestampOf = (id: string) => Number.parseInt(id.replace(/-/g, '').slice(0, 12), 16);

describe('newUuidV7', () => {
  it('makes RFC 9562 version-7 UUIDs that carry the given millisecond', () => {
    const at = Date.UTC(2026, 10, 30, 3, 0, 0, 123);
    const id = newUuidV7(at + 10_000_000);
    expect(validate(id)).toBe(true);
    expect(version(id)).toBe(7);
    expect(parse(id)[8]! >> 6).toBe(0b10);
    expect(timestampOf(id)).toBe(at + 10_000_000);
  });

  it('orders ids made in one millisecond, and across milliseconds, by creation', () => {
    const at = Date.UTC(2027, 0, 1);
    const ids = [...Array.from({ length: 5_000 }, () => newUuidV7(at)), ...Array.from({ length: 5_000 }, () => newUuidV7(at + 1))];
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('never repeats across refills of its random pool', () => {
    const ids = Array.from({ length: 100_000 }, () => newUuidV7());
    expect(new Set(ids).size).toBe(ids.length);
    // The last 42 bits are random for every id, not a counter: among 100,000 of them a handful of
    // birthday collisions may occur (about one in a thousand runs sees one), a stuck pool many.
    const tails = new Set(ids.map((id) => id.slice(-12)));
    expect(tails.size).toBeGreaterThan(ids.length - 10);
  });
});
