import { describe, expect, it } from '@jest/globals';
import { checkLimitTarget, checkOptions, InvalidArgumentError, nearestKey, showValue } from '../../lib/core/index.js';

const WAIT = ['timeoutMs', 'signal'];

function message(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidArgumentError);
    return (error as Error).message;
  }
  throw new Error('expected a refusal');
}

describe('checkOptions', () => {
  it('issue 35 item 7: passes undefined and known keys, and refuses an unknown key naming the nearest known one', () => {
    expect(checkOptions(undefined, WAIT, { what: 'waitFor' })).toBeUndefined();
    const options = { timeoutMs: 5 };
    expect(checkOptions(options, WAIT, { what: 'waitFor' })).toBe(options);
    expect(checkOptions(Object.assign(Object.create(null) as object, { signal: undefined }), WAIT, { what: 'waitFor' })).toBeDefined();
    expect(message(() => checkOptions({ timeout: 5 }, WAIT, { what: 'waitFor' }))).toBe('timeout is not a known waitFor option (did you mean timeoutMs?); known options are timeoutMs, signal.');
    expect(message(() => checkOptions({ zzz: 5 }, WAIT, { what: 'waitFor' }))).toBe('zzz is not a known waitFor option; known options are timeoutMs, signal.');
  });

  it('issue 35 item 7: refuses arrays, functions, built-ins and a promise of options where an options object is expected', () => {
    for (const [value, got] of [
      [null, 'null'],
      ['fast', '"fast"'],
      [5, '5'],
      [[], 'an array'],
      [() => ({}), 'a function'],
      [new Map(), 'a Map'],
      [new Date(0), 'a Date'],
      [Promise.resolve({}), 'a Promise'],
    ] as const) {
      expect(message(() => checkOptions(value as never, WAIT, { what: 'waitFor' }))).toBe(`options must be an object, got ${got}.`);
    }
    class Settings {
      timeoutMs = 5;
    }
    expect(checkOptions(new Settings(), WAIT, { what: 'waitFor' })).toBeInstanceOf(Settings);
  });

  it('issue 35 item 7: names several unknown keys, prefixes them, and points to the docs when the list is long', () => {
    const known = Array.from({ length: 20 }, (_, i) => `option${i}`);
    expect(message(() => checkOptions({ a: 1, b: 2, c: 3, d: 4, e: 5 }, known, { what: 'SchedulerModule', docs: 'docs/module-options.md' }))).toBe(
      'a, b, c and 2 more are not known SchedulerModule options; see docs/module-options.md for the options.',
    );
    expect(message(() => checkOptions({ optoin1: 1, b: 2 }, known, { what: 'SchedulerModule', docs: 'docs/module-options.md', where: 'x.' }))).toBe(
      'x.optoin1 and x.b are not known SchedulerModule options (did you mean option1?); see docs/module-options.md for the options.',
    );
  });

  it('issue 35 item 7: quotes a hostile key so no control character, bidirectional override or line separator reaches the message', () => {
    for (const key of ['a\nb', 'a\u001b[2Jb', 'a\u009bb', 'a\u202eb', 'a\u2028b', 'a"b', 'x'.repeat(500)]) {
      const text = message(() => checkOptions({ [key]: 1 }, WAIT, { what: 'waitFor' }));
      expect(text).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e]/);
      expect(text.length).toBeLessThan(200);
      expect(text).toMatch(/^"[^\n]+" is not a known waitFor option/);
    }
    expect(showValue('a\u009bb\u202e')).toBe('"a\\x9bb\\u202e"');
  });

  it('nearestKey suggests a case slip, a prefix or a small typo, and nothing for a far-off key', () => {
    expect(nearestKey('TIMEOUTMS', WAIT)).toBe('timeoutMs');
    expect(nearestKey('timeout', WAIT)).toBe('timeoutMs');
    expect(nearestKey('sigal', WAIT)).toBe('signal');
    expect(nearestKey('x', WAIT)).toBeUndefined();
    expect(nearestKey('priority', WAIT)).toBeUndefined();
  });
});

describe('checkLimitTarget', () => {
  it('issue 35 item 8: takes exactly one of queue or key, and refuses both, neither and stray keys in one sentence', () => {
    expect(checkLimitTarget({ queue: 'mail' }, 'A rate limit')).toEqual({ queue: 'mail' });
    expect(checkLimitTarget({ key: 'tenant-1', queue: undefined }, 'A rate limit')).toEqual({ key: 'tenant-1' });
    expect(message(() => checkLimitTarget({ queue: 'mail', key: 'k' }, 'A rate limit'))).toBe('A rate limit names both a queue and a key; give one target: { queue } or { key }.');
    expect(message(() => checkLimitTarget({}, 'A rate limit'))).toBe('A rate limit needs a target: { queue } or { key }.');
    expect(message(() => checkLimitTarget(undefined, 'A rate limit'))).toBe('A rate limit needs a target: { queue } or { key }.');
    expect(message(() => checkLimitTarget({ queue: 'mail', max: 2 }, 'A rate limit'))).toBe('max is not a known limit target option; known options are queue, key.');
    expect(checkLimitTarget({ queue: 'mail', max: 2 }, 'A concurrency limit', { otherKeys: ['max', 'perMs'] })).toEqual({ queue: 'mail' });
    expect(message(() => checkLimitTarget({ queue: 'bad/queue' }, 'rateLimits[1]', { where: 'rateLimits[1].' }))).toMatch(/^rateLimits\[1\]\.queue must be 1 to 64 characters/);
  });
});
