import { describe, expect, it } from '@jest/globals';
import { Injectable } from '@nestjs/common';
import { InvalidArgumentError, Job, OnJobTransition, type SchedulerModuleOptions } from '../../lib/index.js';
import { MemoryJobStore } from '../../lib/testing/index.js';
import { boot } from './bad-input.cases.js';
import { expectTypedRefusal, HOSTILE, HOSTILE_NAMES, memoryState, RULES, thrown } from './hostile.js';

const NOT_DATA = ['clock', 'hints', 'probe', 'rules', 'capabilities', 'limits', 'historyPolicy'];
const QUEUES = ['default', HOSTILE.dotted, HOSTILE.long];

/** A `@Job` class named `className`, declared with `options` (applied by hand: they are deliberately wrong). */
function handlerClass(className: string, options: unknown): Function {
  const cls = { [className]: class {
    handle() {}
  } }[className]!;
  (Job(options as never) as unknown as ClassDecorator)(cls);
  return cls;
}

/** A provider named `className` with one `@OnJobTransition(options)` method, `onEvent`. */
function observerClass(className: string, options: unknown): Function {
  const cls = { [className]: class {
    onEvent() {}
  } }[className]!;
  const descriptor = Object.getOwnPropertyDescriptor(cls.prototype, 'onEvent')!;
  OnJobTransition(options as never)(cls.prototype, 'onEvent', descriptor);
  Injectable()(cls);
  return cls;
}

/** Boots with the providers on a seeded store: refused with a sentence naming the class, nothing changed. */
async function refusedAtBoot(providers: Function[], className: RegExp, options: SchedulerModuleOptions = {}): Promise<Error> {
  const store = new MemoryJobStore(options.historyPolicy ? { historyPolicy: options.historyPolicy } : {});
  await store.jobEnqueue({ job: { name: 'seed.job', payload: { seed: true } } });
  const before = memoryState(store, NOT_DATA);
  const error = await thrown(() => boot({ queues: QUEUES, ...options, store }, 'sync', providers));
  expectTypedRefusal(error, InvalidArgumentError, className);
  expect(memoryState(store, NOT_DATA)).toEqual(before);
  return error;
}

const circular: Record<string, unknown> = {};
circular.self = circular;

/** `@Job` options that stop the boot; every message starts with the class it names. */
const BAD_JOBS: Array<[string, Record<string, unknown>, RegExp]> = [
  ...HOSTILE_NAMES.filter((n) => RULES.wireName[n] === 'refused').map((n): [string, Record<string, unknown>, RegExp] => [
    `the ${n} wire name`,
    { name: HOSTILE[n] },
    /^@Job name on BadJob must be 1 to 128 characters/,
  ]),
  ['a wire name of 129 characters', { name: 'n'.repeat(129) }, /^@Job name on BadJob must be 1 to 128 characters/],
  ['a wire name that is a number', { name: 42 }, /^@Job name on BadJob must be/],
  ...HOSTILE_NAMES.filter((n) => RULES.queue[n] === 'refused').map((n): [string, Record<string, unknown>, RegExp] => [
    `the ${n} queue`,
    { name: 'bad.job', queue: HOSTILE[n] },
    /^BadJob \(@Job 'bad\.job'\) queue must be 1 to 64 characters/,
  ]),
  ['a queue of 65 characters', { name: 'bad.job', queue: 'q'.repeat(65) }, /^BadJob \(@Job 'bad\.job'\) queue must be 1 to 64 characters/],
  ['a queue the module does not consume', { name: 'bad.job', queue: 'reports' }, /^BadJob \(@Job 'bad\.job'\) uses the queue "reports", which this module does not consume/],
  ...([0, 1e9, Number.NaN, '3'] as const).map((maxAttempts): [string, Record<string, unknown>, RegExp] => [
    `maxAttempts ${String(maxAttempts)}`,
    { name: 'bad.job', maxAttempts },
    /^BadJob \(@Job 'bad\.job'\) maxAttempts must be a whole number from 1 to 10000/,
  ]),
  ['a negative retry base', { name: 'bad.job', retry: { baseDelayMs: -1 } }, /^BadJob \(@Job 'bad\.job'\) retry\.baseDelayMs must be/],
  ['a retry ceiling over 100 years', { name: 'bad.job', retry: { maxDelayMs: 1e300 } }, /^BadJob \(@Job 'bad\.job'\) retry\.maxDelayMs must be at most/],
  ['retry as a string', { name: 'bad.job', retry: 'fast' }, /^BadJob \(@Job 'bad\.job'\) retry must be an object/],
  ...([0, Number.NaN, 1e10, -5] as const).map((timeoutMs): [string, Record<string, unknown>, RegExp] => [
    `timeoutMs ${timeoutMs}`,
    { name: 'bad.job', timeoutMs },
    /^BadJob \(@Job 'bad\.job'\) timeoutMs must be a whole number from 1 to 2147483647/,
  ]),
  ['transaction as a string', { name: 'bad.job', transaction: 'yes' }, /^BadJob \(@Job 'bad\.job'\) sets transaction to something other than true or false\.$/],
  ['validate as a string', { name: 'bad.job', validate: 'isOrder' }, /^BadJob \(@Job 'bad\.job'\) sets validate to something other than a function\.$/],
  ['concurrencyKey as a string', { name: 'bad.job', concurrencyKey: 'tenant' }, /^BadJob \(@Job 'bad\.job'\) sets concurrencyKey to something other than a function of the payload\.$/],
  ...([0, 1e9, 2.5] as const).map((concurrencyLimit): [string, Record<string, unknown>, RegExp] => [
    `concurrencyLimit ${concurrencyLimit}`,
    { name: 'bad.job', concurrencyLimit },
    /^BadJob \(@Job 'bad\.job'\) concurrencyLimit must be a whole number from 1 to 10000/,
  ]),
  ['an unknown option', { name: 'bad.job', maxAttempt: 3 }, /^BadJob \(@Job 'bad\.job'\) sets maxAttempt, which is not a @Job option/],
  ['an unknown option with a newline in its name', { name: 'bad.job', 'max\nAttempts': 3 }, /^BadJob \(@Job 'bad\.job'\) sets "max\\nAttempts", which is not a @Job option/],
  ['a bad cron pattern', { name: 'bad.job', schedule: { cron: '61 * * * *' } }, /^BadJob \(@Job 'bad\.job'\) declares a bad schedule: cron "61 \* \* \* \*" is not a valid cron pattern/],
  ['a cron pattern with a newline', { name: 'bad.job', schedule: { cron: '0 9 * * *\n0 10 * * *' } }, /^BadJob \(@Job 'bad\.job'\) declares a bad schedule: cron "0 9 \* \* \*\\n0 10 \* \* \*" is not a valid cron pattern/],
  ['a bad time zone', { name: 'bad.job', schedule: { cron: '0 9 * * *', timezone: 'Mars/Olympus' } }, /^BadJob \(@Job 'bad\.job'\) declares a bad schedule: timezone must be an IANA time zone/],
  ['an interval under a second', { name: 'bad.job', schedule: { everyMs: 10 } }, /^BadJob \(@Job 'bad\.job'\) declares a bad schedule: everyMs must be at least 1000/],
  ['a schedule with neither cron nor everyMs', { name: 'bad.job', schedule: {} }, /^BadJob \(@Job 'bad\.job'\) declares a bad schedule: A schedule needs exactly one of cron or everyMs\.$/],
  ['a schedule payload with a cycle', { name: 'bad.job', schedule: { everyMs: 60_000, payload: circular } }, /^BadJob \(@Job 'bad\.job'\) declares a bad schedule: payload contains a circular reference/],
  ['a schedule with an unknown option', { name: 'bad.job', schedule: { everyMs: 60_000, every: 5 } }, /^BadJob \(@Job 'bad\.job'\) declares a bad schedule: every is not a known schedule option/],
];

/** `@OnJobTransition` options that stop the boot; every message names Class.method. */
const BAD_OBSERVERS: Array<[string, unknown, RegExp]> = [
  ['no options', undefined, /^@OnJobTransition on BadObserver\.onEvent needs `to`/],
  ['no to', {}, /^@OnJobTransition on BadObserver\.onEvent needs `to`: a non-empty list of job states\.$/],
  ['an empty to', { to: [] }, /^@OnJobTransition on BadObserver\.onEvent needs `to`/],
  ['an unknown state', { to: ['done'] }, /^@OnJobTransition on BadObserver\.onEvent needs `to`/],
  ['to as a string', { to: 'dead_lettered' }, /^@OnJobTransition on BadObserver\.onEvent needs `to`/],
  ...HOSTILE_NAMES.filter((n) => RULES.wireName[n] === 'refused').map((n): [string, unknown, RegExp] => [
    `a job filter with the ${n} name`,
    { to: ['dead_lettered'], job: HOSTILE[n] },
    /^@OnJobTransition on BadObserver\.onEvent job\[0\] must be 1 to 128 characters/,
  ]),
  ...HOSTILE_NAMES.filter((n) => RULES.key[n] === 'refused').map((n): [string, unknown, RegExp] => [
    `the ${n} observer id`,
    { to: ['dead_lettered'], id: HOSTILE[n] },
    /^@OnJobTransition on BadObserver\.onEvent id must be 1 to 200 characters without control characters/,
  ]),
  ...(['', 'o\u0000', 'i'.repeat(201)] as const).map((id): [string, unknown, RegExp] => [
    `the observer id ${JSON.stringify(id.slice(0, 10))}`,
    { to: ['dead_lettered'], id },
    /^@OnJobTransition on BadObserver\.onEvent id must be 1 to 200 characters without control characters/,
  ]),
];

describe('bad decorator options stop the boot with a typed error naming the class', () => {
  it.each(BAD_JOBS)('@Job with %s', async (_label, options, message) => {
    await refusedAtBoot([handlerClass('BadJob', options)], message);
  });

  it.each(BAD_OBSERVERS)('@OnJobTransition with %s', async (_label, options, message) => {
    await refusedAtBoot([observerClass('BadObserver', options)], message);
  });

  it('two observers sharing an id, naming the id to change', async () => {
    const error = await refusedAtBoot(
      [observerClass('FirstObserver', { to: ['dead_lettered'], id: 'alerts' }), observerClass('SecondObserver', { to: ['cancelled'], id: 'alerts' })],
      /^Two @OnJobTransition methods share the observer id "alerts"/,
    );
    expect(error.message).toMatch(/give one of them its own id option\.$/);
  });

  it('an observer while history is off, naming the observer', async () => {
    await refusedAtBoot([observerClass('DeadLetters', { to: ['dead_lettered'] })], /^DeadLetters\.onEvent observes job transitions, but historyPolicy is "off"/, { historyPolicy: 'off' });
  });

  it.each(HOSTILE_NAMES.filter((n) => RULES.wireName[n] === 'accepted'))('@Job accepts the %s identifier as a wire name and as a queue', async (name) => {
    const value = HOSTILE[name];
    await expect(boot({ store: new MemoryJobStore(), queues: QUEUES }, 'sync', [handlerClass('FineJob', { name: value, queue: value })])).resolves.toBeUndefined();
  });

  it.each(HOSTILE_NAMES.filter((n) => RULES.key[n] === 'accepted'))('@OnJobTransition accepts the %s identifier as an observer id, which a store keeps byte for byte', async (name) => {
    const store = new MemoryJobStore();
    const value = HOSTILE[name];
    const job = RULES.wireName[name] === 'accepted' ? { job: value } : {};
    await boot({ store, queues: QUEUES }, 'sync', [observerClass('FineObserver', { to: ['dead_lettered'], id: value, ...job })]);
    // The id is where the observer's cursor lives; every store keeps it byte for byte.
    expect(await store.observerLease({ observer: value, workerId: 'probe', leaseMs: 1_000 })).toMatchObject({ observer: value });
  });
});
