import { describe, expect, it } from '@jest/globals';
import {
  assertSqlIdentifier,
  assertUuid,
  assertSqlPrefix,
  DEFAULT_LIMITS,
  encodeJson,
  InvalidArgumentError,
  InvalidIdentifierError,
  resolveLimits,
  truncateUtf8,
} from '../../lib/core/index.js';

const HOSTILE = ["o'brien", 'a"b', 'a$$b', 'x.job', 'a\nb', ';drop', 'x; drop table y', 'Upper', '1abc', '', 'a'.repeat(64), ' spaced'];

describe('SQL identifiers', () => {
  it.each(HOSTILE)('refuses %j', (name) => {
    expect(() => assertSqlIdentifier(name, 'schema')).toThrow(InvalidIdentifierError);
    expect(() => assertSqlIdentifier(name, 'schema')).toThrow(/^schema must be a lower-case SQL identifier .*\.$/);
  });

  it('accepts plain lower-case identifiers up to 63 characters, and an empty prefix', () => {
    expect(assertSqlIdentifier('durable_scheduler', 'schema')).toBe('durable_scheduler');
    expect(assertSqlIdentifier('_x9', 'schema')).toBe('_x9');
    expect(assertSqlIdentifier('a'.repeat(63), 'schema')).toHaveLength(63);
    expect(assertSqlPrefix('', 'tablePrefix')).toBe('');
    expect(() => assertSqlIdentifier(42, 'schema')).toThrow('schema must be a lower-case SQL identifier');
  });
});

describe('encodeJson', () => {
  const opts = { argument: 'payload', maxBytes: 64, maxDepth: 3 };

  it('lets values choose their JSON form and drops undefined object members, like JSON.stringify', () => {
    expect(encodeJson({ at: new Date(0), skip: undefined, list: [undefined] }, { ...opts, maxBytes: 1_000 })).toBe(
      '{"at":"1970-01-01T00:00:00.000Z","list":[null]}',
    );
  });

  it('counts UTF-8 bytes and treats the limit as inclusive', () => {
    expect(encodeJson('€'.repeat(20), opts)).toHaveLength(22); // 62 bytes
    expect(() => encodeJson('€'.repeat(21), opts)).toThrow('payload is 65 bytes as JSON, over the limit of 64 bytes.');
  });

  it('refuses nesting deeper than the limit but allows it at the limit', () => {
    expect(encodeJson([[[1]]], opts)).toBe('[[[1]]]');
    expect(() => encodeJson([[[[1]]]], opts)).toThrow('payload is nested more than 3 levels deep.');
  });

  it('allows the same object twice when it is not a cycle', () => {
    const shared = { x: 1 };
    expect(encodeJson({ a: shared, b: shared }, opts)).toBe('{"a":{"x":1},"b":{"x":1}}');
  });

  it.each<[string, unknown]>([
    ['Infinity', Number.POSITIVE_INFINITY],
    ['a symbol', { s: Symbol('x') }],
    ['a Set', new Set([1])],
    ['a NUL in a key', { 'a\u0000': 1 }],
  ])('refuses %s', (_label, value) => {
    expect(() => encodeJson(value, opts)).toThrow(InvalidArgumentError);
  });
});

describe('truncateUtf8', () => {
  it('never splits a character, including surrogate pairs', () => {
    expect(truncateUtf8('ab😀c', 5)).toBe('ab');
    expect(truncateUtf8('ab😀c', 6)).toBe('ab😀');
    expect(truncateUtf8('short', 100)).toBe('short');
    expect(Buffer.byteLength(truncateUtf8('é'.repeat(100), 9))).toBe(8);
  });
});

describe('limits', () => {
  it('fills defaults and refuses unknown names and non-positive values', () => {
    expect(resolveLimits({ maxPayloadBytes: 10 })).toEqual({ ...DEFAULT_LIMITS, maxPayloadBytes: 10 });
    expect(DEFAULT_LIMITS).toMatchObject({ maxPayloadBytes: 262_144, maxOutputBytes: 65_536, maxNameLength: 128, maxErrorBytes: 8_192 });
    expect(() => resolveLimits({ maxPayloadByte: 1 } as never)).toThrow('limits.maxPayloadByte is not a known limit');
    expect(() => resolveLimits({ maxOutputBytes: 0 })).toThrow('limits.maxOutputBytes must be a whole number of at least 1, got 0.');
    expect(() => resolveLimits({ maxOutputBytes: 1.5 })).toThrow(InvalidArgumentError);
  });
});

describe('issue 19 item 11: assertUuid takes any 128-bit UUID text', () => {
  it.each([
    ['version 0, variant 0 (the nil-like id)', '00000000-0000-0000-0000-000000000001'],
    ['version 0, variant 7', '12345678-9abc-0def-7123-456789abcdef'],
    ['version f, variant f', '12345678-9abc-fdef-f123-456789abcdef'],
    ['the max id', 'ffffffff-ffff-ffff-ffff-ffffffffffff'],
    ['the nil id', '00000000-0000-0000-0000-000000000000'],
  ])('accepts %s', (_label, id) => {
    expect(assertUuid(id, 'id')).toBe(id);
    expect(assertUuid(id.toUpperCase(), 'id')).toBe(id);
  });

  it('normalizes the simple, braced and urn forms to lower-case hyphenated text', () => {
    const id = '12345678-9abc-0def-7123-456789abcdef';
    expect(assertUuid(id.replaceAll('-', '').toUpperCase(), 'id')).toBe(id);
    expect(assertUuid(`{${id.toUpperCase()}}`, 'id')).toBe(id);
    expect(assertUuid(`urn:uuid:${id}`, 'id')).toBe(id);
  });

  it.each(['', 'not-a-uuid', '12345678-9abc-0def-7123-456789abcde', '{123456789abc0def7123456789abcdef}', 'URN:UUID:12345678-9abc-0def-7123-456789abcdef', '12345678_9abc_0def_7123_456789abcdef'])(
    'refuses %j',
    (text) => {
      expect(() => assertUuid(text, 'id')).toThrow(/^id must be a UUID, got /);
    },
  );

  it('refuses what is not a string', () => {
    expect(() => assertUuid(42, 'id')).toThrow('id must be a UUID, got 42.');
    expect(() => assertUuid(null, 'jobId')).toThrow('jobId must be a UUID, got null.');
  });
});
