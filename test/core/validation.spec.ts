import { describe, expect, it } from '@jest/globals';
import {
  assertSqlIdentifier,
  assertUuid,
  assertSqlPrefix,
  DEFAULT_LIMITS,
  encodeJson,
  InvalidArgumentError,
  InvalidIdentifierError,
  MAX_JSON_DEPTH_CEILING,
  PayloadTooLargeError,
  resolveLimits,
  truncateUtf8,
} from '../../lib/core/index.js';
import { writeDeepJson } from '../../lib/core/validation/json-deep-writer.js';

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

describe('issue 19, smaller bad-input gaps: encodeJson', () => {
  const opts = { argument: 'payload', maxBytes: 10_000, maxDepth: 64 };
  const refusal = (value: unknown, options = opts) => {
    try {
      encodeJson(value, options);
    } catch (error) {
      return error as Error;
    }
    throw new Error('expected a refusal');
  };

  it('a boxed BigInt is a typed refusal, not a TypeError', () => {
    const error = refusal({ amount: Object(10n) });
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect(error.message).toBe('payload contains a boxed BigInt, which JSON cannot represent; send it as a string.');
  });

  it('a getter that throws is a typed refusal naming its path, never its message', () => {
    const order = { lines: [{ sku: 'a' }, { get secret(): string { throw new Error('card 4111 1111 1111 1111'); } }] };
    const error = refusal({ order });
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect(error.message).toBe('payload could not be read: a getter, Proxy trap or toJSON method threw (Error) at payload.order.lines[1].secret.');
    expect(error.message).not.toContain('4111');
  });

  it('a Proxy whose traps throw, a revoked Proxy and a throwing toJSON are typed refusals', () => {
    const ownKeys = new Proxy({}, { ownKeys: () => { throw new TypeError('no keys'); } });
    expect(refusal({ a: ownKeys }).message).toBe('payload could not be read: a getter, Proxy trap or toJSON method threw (TypeError) at payload.a.');
    const get = new Proxy({ x: 1 }, { get: () => { throw new RangeError('no'); } });
    expect(refusal([0, get]).message).toBe('payload could not be read: a getter, Proxy trap or toJSON method threw (RangeError) at payload[1].');
    const { proxy, revoke } = Proxy.revocable({}, {});
    revoke();
    expect(refusal({ 'odd key\n': proxy }).message).toBe('payload could not be read: a getter, Proxy trap or toJSON method threw (TypeError) at payload["odd key\\n"].');
    const toJSON = { toJSON: () => { throw 'a thrown string'; } };
    expect(refusal({ at: toJSON }).message).toBe('payload could not be read: a getter, Proxy trap or toJSON method threw at payload.at.');
    for (const value of [ownKeys, get, proxy, toJSON]) expect(refusal(value)).toBeInstanceOf(InvalidArgumentError);
  });

  it('an error whose own name throws is still a typed refusal, and a Proxy array is read with the length it answers', () => {
    const hostile = new Error('x');
    Object.defineProperty(hostile, 'name', { get: () => { throw new Error('again'); } });
    expect(refusal({ get a(): never { throw hostile; } }).message).toBe('payload could not be read: a getter, Proxy trap or toJSON method threw at payload.a.');
    const lengths = (length: unknown) => new Proxy([7, 8], { get: (target, key) => (key === 'length' ? length : Reflect.get(target, key)) });
    for (const length of ['x', -1, 1.9, '2', Number.NaN]) expect(encodeJson(lengths(length), opts)).toBe(JSON.stringify(lengths(length)));
  });

  it('a long path is cut to its first and last steps', () => {
    let value: unknown = { get boom(): never { throw new Error('x'); } };
    for (let i = 0; i < 10; i++) value = { [`level${i}`]: value };
    expect(refusal(value).message).toBe('payload could not be read: a getter, Proxy trap or toJSON method threw (Error) at payload.level9.level8….level1.level0.boom.');
  });

  it.each<[string, unknown, string]>([
    ['a boxed NaN', { n: Object(Number.NaN) }, 'payload contains the number NaN, which JSON cannot represent.'],
    ['a boxed Infinity', { n: new Number(Number.POSITIVE_INFINITY) }, 'payload contains the number Infinity, which JSON cannot represent.'],
    ['a boxed -Infinity in an array', [Object(Number.NEGATIVE_INFINITY)], 'payload contains the number -Infinity, which JSON cannot represent.'],
    ['a toJSON returning NaN', { at: { toJSON: () => Number.NaN } }, 'payload contains the number NaN, which JSON cannot represent.'],
  ])('%s is refused, not stored as null', (_label, value, message) => {
    const error = refusal(value);
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect(error.message).toBe(message);
  });

  it('boxed numbers, strings and booleans are written as their primitive value, whatever valueOf says', () => {
    const five = new Number(5);
    five.valueOf = () => Number.NaN;
    expect(encodeJson({ n: five, s: new String('x'), b: new Boolean(false), list: [Object(1)] }, opts)).toBe('{"n":5,"s":"x","b":false,"list":[1]}');
    expect(() => encodeJson({ s: new String('a\u0000b') }, opts)).toThrow('payload contains the NUL character');
  });

  describe('the value checked is the value written', () => {
    /** An object whose `field` answers `first` on the first read and `later` on every other. */
    const flipping = (first: unknown, later: unknown) => {
      let reads = 0;
      return {
        value: { get field() { return reads++ === 0 ? first : later; } },
        reads: () => reads,
      };
    };
    let deep: unknown = 1;
    for (let i = 0; i < 100; i++) deep = [deep];

    it.each<[string, unknown]>([
      ['a NUL character', 'a\u0000b'],
      ['a lone surrogate', 'a\ud800b'],
      ['nesting past the limit', deep],
      ['a BigInt', 10n],
    ])('a getter that answers a good value first and %s later is written with the good value, read once', (_label, later) => {
      const getter = flipping('ok', later);
      expect(encodeJson(getter.value, opts)).toBe('{"field":"ok"}');
      expect(getter.reads()).toBe(1);
    });

    it('reads every property and toJSON once, through a Proxy too', () => {
      const reads: string[] = [];
      const target = { a: 1, b: { c: [2] } };
      const proxy = new Proxy(target, { get: (t, key, receiver) => (reads.push(String(key)), Reflect.get(t, key, receiver)) });
      expect(encodeJson(proxy, opts)).toBe('{"a":1,"b":{"c":[2]}}');
      expect(reads).toEqual(['toJSON', 'a', 'b']);
      let calls = 0;
      const dated = { toJSON: (key: string) => (calls++, `called with ${JSON.stringify(key)}`) };
      expect(encodeJson({ when: dated, list: [dated] }, opts)).toBe('{"when":"called with \\"when\\"","list":["called with \\"0\\""]}');
      expect(calls).toBe(2);
    });
  });

  it('writes what JSON.stringify writes for every value it accepts', () => {
    class Point {
      constructor(readonly x: number, readonly y: number) {}
    }
    const values: unknown[] = [
      { at: new Date(Date.UTC(1850, 0, 1)), invalid: new Date(Number.NaN), none: undefined, list: [undefined, , 3], negZero: -0 }, // eslint-disable-line no-sparse-arrays
      { 2: 'b', 1: 'a', z: 1, 10: 'c', '-1': 'd', 'a"b': 'q', '\n': 'nl', '\u2028': 'ls', emoji: '😀' },
      [new Point(1, 2), new Uint8Array([1, 2]), /re/g, new Error('not kept'), { toJSON: () => ({ nested: new Date(0) }) }],
      'plain text', 0, 1e21, 5e-324, true, null, [], {},
    ];
    for (const value of values) expect(encodeJson(value, opts)).toBe(JSON.stringify(value));
  });

  it('nesting of 50,000 levels under a raised limit is encoded by a loop, not the call stack', () => {
    const levels = 50_000; // more than ten times what JSON.stringify's recursion survives
    let value: unknown = 1;
    for (let i = 0; i < levels; i++) value = i % 2 === 0 ? [value] : { k: value };
    const options = { argument: 'payload', maxBytes: 10 * levels, maxDepth: levels };
    expect(encodeJson(value, options)).toBe(`${'{"k":['.repeat(levels / 2)}1${']}'.repeat(levels / 2)}`);
    expect(() => encodeJson(value, { ...options, maxDepth: levels - 1 })).toThrow(`payload is nested more than ${levels - 1} levels deep.`);
  });

  it('stops walking a value that is certainly over the size limit', () => {
    const error = refusal(new Array(1e9), { argument: 'payload', maxBytes: 1_000, maxDepth: 64 });
    expect(error).toBeInstanceOf(PayloadTooLargeError);
    expect(error.message).toMatch(/^payload is at least \d+ bytes as JSON, over the limit of 1000 bytes\.$/);
  });
});

describe('writeDeepJson', () => {
  it('writes what JSON.stringify writes for plain copies', () => {
    const values: unknown[] = [{ 2: 'b', 1: 'a', z: [1, 'two', null, true, { x: -0 }] }, 'a"\u2028😀', 3.5, null, [], {}, [[[]]], { a: { b: {} } }];
    for (const value of values) expect(writeDeepJson(value)).toBe(JSON.stringify(value));
  });
});

describe('issue 39 item 5: limits.maxAttemptsCeiling', () => {
  it('a ceiling above what a 32-bit max_attempts keeps, with room for snoozes, is refused with one sentence', () => {
    // Issue 39 item 5: max_attempts is a 32-bit column on PostgreSQL and MySQL, and each snooze adds one.
    expect(() => resolveLimits({ maxAttemptsCeiling: 2 ** 31 })).toThrow(
      new InvalidArgumentError('limits.maxAttemptsCeiling must be at most 2000000000, which every store keeps with room for snoozes, got 2147483648.', 'limits.maxAttemptsCeiling'),
    );
    expect(resolveLimits({ maxAttemptsCeiling: 2_000_000_000 }).maxAttemptsCeiling).toBe(2_000_000_000);
  });
});

describe('issue 19, smaller bad-input gaps: limits.maxJsonDepth', () => {
  it('a depth limit above what every store keeps is refused with one sentence', () => {
    expect(() => resolveLimits({ maxJsonDepth: 1e6 })).toThrow(new InvalidArgumentError('limits.maxJsonDepth must be at most 1000, which every store keeps, got 1000000.', 'limits.maxJsonDepth'));
    expect(resolveLimits({ maxJsonDepth: MAX_JSON_DEPTH_CEILING }).maxJsonDepth).toBe(1_000);
  });
});
