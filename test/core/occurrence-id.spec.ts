import { describe, expect, it } from '@jest/globals';
import { createHash } from 'node:crypto';
import { InvalidArgumentError, OCCURRENCE_NAMESPACE, OccurrenceId } from '../../lib/core/index.js';

const SCHEDULE = '0d9e6a52-3f1c-4b7a-9e2d-5c8f1a6b3e40';

/** RFC 4122 §4.3 by hand, independent of the uuid package the library uses. */
function referenceV5(namespace: string, name: Uint8Array): string {
  const ns = Buffer.from(namespace.replace(/-/g, ''), 'hex');
  const hash = createHash('sha1').update(ns).update(name).digest();
  const bytes = Buffer.from(hash.subarray(0, 16));
  bytes[6] = (bytes[6]! & 0x0f) | 0x50;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The name bytes as the contract spells them: id bytes, sign byte, 16-byte big-endian nanoseconds. */
function nameBytes(scheduleId: string, nanos: bigint): Uint8Array {
  const magnitude = nanos < 0n ? -nanos : nanos;
  const hex = magnitude.toString(16).padStart(32, '0');
  return Buffer.concat([Buffer.from(scheduleId.replace(/-/g, ''), 'hex'), Buffer.from([nanos >= 0n ? 1 : 0]), Buffer.from(hex, 'hex')]);
}

describe('OccurrenceId.derive', () => {
  const instants: Array<[string, Date]> = [
    ['the epoch itself', new Date(0)],
    ['a moment after the epoch', new Date(Date.UTC(2026, 10, 29, 21, 30, 0, 123))],
    ['a moment before the epoch', new Date(Date.UTC(1969, 6, 20, 20, 17, 40, 5))],
    ['the far future', new Date(8.64e15)],
  ];

  it.each(instants)('matches an independent RFC 4122 UUIDv5 over the contract name bytes at %s', (_label, instant) => {
    const nanos = BigInt(instant.getTime()) * 1_000_000n;
    expect(OccurrenceId.derive(SCHEDULE, instant)).toBe(referenceV5(OCCURRENCE_NAMESPACE, nameBytes(SCHEDULE, nanos)));
  });

  it('lays out 33 name bytes with the sign byte at offset 16', () => {
    const after = nameBytes(SCHEDULE, 1_500_000_000n);
    const before = nameBytes(SCHEDULE, -1_500_000_000n);
    expect(after).toHaveLength(33);
    expect(after[16]).toBe(1);
    expect(before[16]).toBe(0);
    expect(Buffer.from(after.subarray(17)).equals(Buffer.from(before.subarray(17)))).toBe(true);
    expect(OccurrenceId.derive(SCHEDULE, 1_500_000_000n)).not.toBe(OccurrenceId.derive(SCHEDULE, -1_500_000_000n));
  });

  it('accepts nanoseconds directly, so sub-millisecond instants keep their identity', () => {
    const ms = Date.UTC(2030, 0, 1);
    expect(OccurrenceId.derive(SCHEDULE, BigInt(ms) * 1_000_000n)).toBe(OccurrenceId.derive(SCHEDULE, new Date(ms)));
    expect(OccurrenceId.derive(SCHEDULE, BigInt(ms) * 1_000_000n + 1n)).toBe(
      referenceV5(OCCURRENCE_NAMESPACE, nameBytes(SCHEDULE, BigInt(ms) * 1_000_000n + 1n)),
    );
    expect(OccurrenceId.derive(SCHEDULE, BigInt(ms) * 1_000_000n + 1n)).not.toBe(OccurrenceId.derive(SCHEDULE, new Date(ms)));
  });

  it('is a version-5, RFC-variant UUID that depends on both the schedule and the instant', () => {
    const id = OccurrenceId.derive(SCHEDULE, new Date(1_000));
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(OccurrenceId.derive(SCHEDULE, new Date(1_000))).toBe(id);
    expect(OccurrenceId.derive(SCHEDULE, new Date(1_001))).not.toBe(id);
    expect(OccurrenceId.derive('0d9e6a52-3f1c-4b7a-9e2d-5c8f1a6b3e41', new Date(1_000))).not.toBe(id);
    expect(OccurrenceId.derive(SCHEDULE.toUpperCase(), new Date(1_000))).toBe(id);
  });

  it('refuses a schedule id that is not a UUID and an invalid instant', () => {
    expect(() => OccurrenceId.derive('not-a-uuid', new Date())).toThrow(InvalidArgumentError);
    expect(() => OccurrenceId.derive(SCHEDULE, new Date(Number.NaN))).toThrow('scheduledFor must be a valid Date.');
    expect(() => OccurrenceId.derive(SCHEDULE, 1n << 130n)).toThrow(/too far from the epoch/);
  });
});

describe('issue 19 item 11: any 128-bit UUID text derives occurrence ids, as the Rust scheduler does', () => {
  // Vectors computed outside this library (Python's hashlib and uuid.UUID(...).bytes over the
  // contract's name bytes), for ids the uuid package's parse refuses: version 0, variants 0, 7 and
  // f, the nil-like id from the issue, and the nil and max ids it does accept.
  const vectors: Array<[string, number, string]> = [
    ['00000000-0000-0000-0000-000000000001', 1_000_000, '90b10523-68ea-5eb3-92f6-5d64d3edd1d6'],
    ['00000000-0000-0000-0000-000000000001', -86_400_000, 'dcc7198c-af3a-563c-b27c-5261e746367b'],
    ['00000000-0000-0000-0000-000000000000', 1_000_000, '1ad52226-4f4b-57db-8e97-4416b1612ffa'],
    ['ffffffff-ffff-ffff-ffff-ffffffffffff', -86_400_000, 'd539f3dc-dc08-5984-8928-280b778faa7c'],
    ['12345678-9abc-0def-0123-456789abcdef', 1_000_000, '72e061fe-1779-524c-9961-e32604341720'],
    ['12345678-9abc-0def-7123-456789abcdef', -86_400_000, 'e504e28b-6da1-57e0-bedb-03183d3775fa'],
    ['12345678-9abc-fdef-f123-456789abcdef', 1_000_000, 'f9ec0150-e0c0-5a88-8cde-5d3f67aad1d1'],
  ];

  it.each(vectors)('derives from %s at %d ms the independently computed id', (scheduleId, ms, expected) => {
    expect(OccurrenceId.derive(scheduleId, new Date(ms))).toBe(expected);
    expect(OccurrenceId.derive(scheduleId, new Date(ms))).toBe(referenceV5(OCCURRENCE_NAMESPACE, nameBytes(scheduleId, BigInt(ms) * 1_000_000n)));
  });

  it("the issue's example: a nil-like id no longer throws", () => {
    expect(() => OccurrenceId.derive('00000000-0000-0000-0000-000000000001', new Date(1e6))).not.toThrow();
  });

  it('reads the forms the Rust uuid crate reads (hyphenated, simple, braced, urn, either case) as one id', () => {
    const id = '12345678-9abc-0def-7123-456789abcdef';
    const expected = OccurrenceId.derive(id, new Date(1_000));
    for (const form of [id.toUpperCase(), id.replaceAll('-', ''), id.replaceAll('-', '').toUpperCase(), `{${id}}`, `urn:uuid:${id}`, `urn:uuid:${id.toUpperCase()}`]) {
      expect(OccurrenceId.derive(form, new Date(1_000))).toBe(expected);
    }
  });

  it.each([
    ['a braced simple form', '{123456789abc0def7123456789abcdef}'],
    ['an upper-case urn prefix', 'URN:UUID:12345678-9abc-0def-7123-456789abcdef'],
    ['a non-hex digit', '12345678-9abc-0def-7123-456789abcdeg'],
    ['hyphens in the wrong places', '1234-5678-9abc-0def-7123-456789abcdef'],
    ['surrounding space', ' 12345678-9abc-0def-7123-456789abcdef'],
    ['an unclosed brace', '{12345678-9abc-0def-7123-456789abcdef '],
  ])('refuses %s, as the Rust uuid crate does', (_label, text) => {
    expect(() => OccurrenceId.derive(text, new Date(1_000))).toThrow(/^scheduleId must be a UUID, got /);
  });
});
