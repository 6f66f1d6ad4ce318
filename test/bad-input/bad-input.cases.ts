import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { INestApplicationContext } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import type { DataSource } from 'typeorm';
import {
  CapabilityNotSupportedError,
  IllegalTransitionError,
  InvalidArgumentError,
  InvalidIdentifierError,
  Job,
  JobNotFoundError,
  PayloadTooLargeError,
  PostgresJobStore,
  ScheduleNotFoundError,
  SchedulerClient,
  SchedulerModule,
  type JobStore,
  type SchedulerModuleOptions,
} from '../../lib/index.js';
import { createStore } from '../../lib/nest/scheduler-store.provider.js';
import { expectTypedRefusal, HOSTILE, HOSTILE_NAMES, RULES, thrown, type ErrorClass, type HostileName, type Rule } from './hostile.js';

/** A store under test on its own, empty tables (or, in memory, its own instance). */
export interface OpenedStore {
  readonly store: JobStore;
  /** Every row of every table the store owns; in memory, every collection it holds. */
  snapshot(): Promise<unknown>;
  /** The DataSource of SQL stores, to boot the module on it with bad naming or worker options. */
  readonly dataSource?: DataSource;
  /** Scheduler tables (SQL stores: every table the database shows), to prove a refused boot created none. */
  tables(): Promise<string[]>;
}

export interface BadInputTarget {
  readonly name: 'memory' | 'sqlite' | 'postgres';
  open(): Promise<OpenedStore>;
  teardown(): Promise<void>;
}

/** The payload limit the catalogue's stores run with, small enough to cross cheaply. */
export const MAX_PAYLOAD_BYTES = 4_096;
export const STORE_LIMITS = { maxPayloadBytes: MAX_PAYLOAD_BYTES };

const UNKNOWN_ID = '0190a5a0-0000-7000-8000-00000000dead';
const TENANT_KEY = 'tenant:seed';

/** Decorators applied by hand with loose types: the wire names here are not in any JobRegistry. */
const job = (options: object) => Job(options as never) as unknown as ClassDecorator;

@job({ name: 'orders.confirm' })
class OrdersConfirmJob {
  handle() {}
}

@job({ name: HOSTILE.dotted })
class DottedNameJob {
  handle() {}
}

@job({ name: HOSTILE.long })
class LongNameJob {
  handle() {}
}

/** The key comes from the payload, so hostile keys reach the store through the decorator path too. */
@job({ name: 'keyed.job', concurrencyKey: (payload: { key: unknown }) => payload.key, concurrencyLimit: 2 })
class KeyedJob {
  handle() {}
}

@job({
  name: 'key.throws',
  concurrencyKey: (payload: unknown) => {
    throw new Error(`cannot key ${JSON.stringify(payload)}.\nSecond line.`);
  },
})
class ThrowingKeyJob {
  handle() {}
}

/** Throws an Error behind a Proxy whose every trap throws, `instanceof` included. */
@job({
  name: 'key.hostile',
  concurrencyKey: () => {
    throw new Proxy(new Error('hidden'), new Proxy({}, { get: () => () => { throw new Error('trapped'); } }));
  },
})
class HostileKeyJob {
  handle() {}
}

/** The client with loose types: the catalogue calls it with values its types forbid. */
type Loose<T> = { [K in keyof T]: T[K] extends (...args: never[]) => unknown ? (...args: any[]) => Promise<any> : T[K] };
type Client = Loose<SchedulerClient>;

interface Seed {
  /** A scheduled job. */
  readonly scheduled: string;
  /** A dead-lettered job. */
  readonly deadLettered: string;
  /** A job that succeeded. */
  readonly succeeded: string;
  /** A job waiting for `scheduled`. */
  readonly waiting: string;
  /** An active interval schedule. */
  readonly schedule: string;
}

interface Ctx {
  readonly client: Client;
  readonly store: JobStore;
  readonly seed: Seed;
}

/** One refused call: the entry point, what is wrong, the typed error and the field its message names. */
interface Refusal {
  readonly entry: string;
  readonly label: string;
  readonly call: (ctx: Ctx) => Promise<unknown>;
  /** The error class; a function where stores legitimately differ by a declared capability. */
  readonly error: ErrorClass | ((store: JobStore) => ErrorClass);
  readonly field: RegExp;
}

const circular: Record<string, unknown> = { a: 1 };
circular.self = circular;
const protoKey = JSON.parse('{"__proto__": {"polluted": true}}') as unknown;
let deep: unknown = 'leaf';
for (let i = 0; i < 65; i++) deep = [deep];
const selfJson = {
  toJSON() {
    return this;
  },
};

const enqueue = (name: string, payload: unknown, options?: unknown) => (c: Ctx) => c.client.enqueue(name, payload, options);
const withOptions = (options: unknown) => enqueue('orders.confirm', { n: 1 }, options);
const schedule = (spec: Record<string, unknown>) => (c: Ctx) => c.client.schedule({ name: 'orders.confirm', everyMs: 60_000, ...spec });
const cron = (spec: Record<string, unknown>) => (c: Ctx) => c.client.schedule({ name: 'orders.confirm', cron: '0 9 * * *', ...spec });

const PAYLOADS: Array<[string, unknown, ErrorClass, RegExp]> = [
  ['a circular payload', circular, InvalidArgumentError, /^payload contains a circular reference/],
  ['a BigInt', { amount: 10n }, InvalidArgumentError, /^payload contains a BigInt/],
  ['a __proto__ key', protoKey, InvalidArgumentError, /^payload has a "__proto__" key/],
  ['a NUL character in a string', { text: 'a\u0000b' }, InvalidArgumentError, /^payload contains the NUL character/],
  ['a NUL character in a key', { 'k\u0000': 1 }, InvalidArgumentError, /^payload has a key containing the NUL character/],
  ['a lone surrogate', { text: 'a\ud800b' }, InvalidArgumentError, /^payload contains a lone UTF-16 surrogate/],
  ['a lone surrogate in a key', { 'k\udc00': 1 }, InvalidArgumentError, /^payload has a key containing a lone UTF-16 surrogate/],
  ['nesting 65 levels deep', deep, InvalidArgumentError, /^payload is nested more than 64 levels deep/],
  ['a payload over maxPayloadBytes', { blob: 'x'.repeat(MAX_PAYLOAD_BYTES) }, PayloadTooLargeError, /^payload is \d+ bytes as JSON, over the limit of 4096 bytes/],
  ['an undefined payload', undefined, InvalidArgumentError, /^payload must be a JSON value/],
  ['NaN', { n: Number.NaN }, InvalidArgumentError, /^payload contains the number NaN/],
  ['Infinity', { n: Number.POSITIVE_INFINITY }, InvalidArgumentError, /^payload contains the number Infinity/],
  ['a function', { f: () => 1 }, InvalidArgumentError, /^payload contains a function/],
  ['a Map', new Map([[1, 2]]), InvalidArgumentError, /^payload contains a Map/],
  ['a toJSON that returns its own object', selfJson, InvalidArgumentError, /^payload contains a function/],
  // Issue 19, smaller bad-input gaps: each was an untyped TypeError, or stored as null.
  ['issue 19: a boxed BigInt', { amount: Object(10n) }, InvalidArgumentError, /^payload contains a boxed BigInt, which JSON cannot represent; send it as a string\.$/],
  ['issue 19: a getter that throws', { get card(): never { throw new Error('4111 1111 1111 1111'); } }, InvalidArgumentError, /^payload could not be read: a getter, Proxy trap or toJSON method threw \(Error\) at payload\.card\.$/],
  ['issue 19: a Proxy whose get trap throws', { order: new Proxy({}, { get: () => { throw new TypeError('trap'); } }) }, InvalidArgumentError, /^payload could not be read: a getter, Proxy trap or toJSON method threw \(TypeError\) at payload\.order\.$/],
  ['issue 19: a Proxy whose ownKeys trap throws', new Proxy({}, { ownKeys: () => { throw new TypeError('trap'); } }), InvalidArgumentError, /^payload could not be read: a getter, Proxy trap or toJSON method threw \(TypeError\) at payload\.$/],
  ['issue 19: a boxed NaN', { n: Object(Number.NaN) }, InvalidArgumentError, /^payload contains the number NaN/],
  ['issue 19: a boxed Infinity', { n: new Number(Number.POSITIVE_INFINITY) }, InvalidArgumentError, /^payload contains the number Infinity/],
];

/** Hostile identifiers refused by a field's rule, as cases. */
const hostileRefusals = (entry: string, rule: Rule, call: (value: string) => (c: Ctx) => Promise<unknown>, error: ErrorClass, field: RegExp): Refusal[] =>
  HOSTILE_NAMES.filter((name) => rule[name] === 'refused').map((name) => ({ entry, label: `the ${name} identifier ${JSON.stringify(HOSTILE[name])}`, call: call(HOSTILE[name]), error, field }));

const ID_ENTRIES: Array<[string, (c: Ctx, id: string) => Promise<unknown>, RegExp]> = [
  ['cancel', (c, id) => c.client.cancel(id), /^jobId must be a UUID/],
  ['replay', (c, id) => c.client.replay(id), /^jobId must be a UUID/],
  ['get', (c, id) => c.client.get(id), /^jobId must be a UUID/],
  ['history', (c, id) => c.client.history(id), /^jobId must be a UUID/],
  ['pauseSchedule', (c, id) => c.client.pauseSchedule(id), /^scheduleId must be a UUID/],
  ['resumeSchedule', (c, id) => c.client.resumeSchedule(id), /^scheduleId must be a UUID/],
  ['triggerSchedule', (c, id) => c.client.triggerSchedule(id), /^scheduleId must be a UUID/],
  ['removeSchedule', (c, id) => c.client.removeSchedule(id), /^scheduleId must be a UUID/],
  ['replaySchedule', (c, id) => c.client.replaySchedule(id), /^scheduleId must be a UUID/],
  ['getSchedule', (c, id) => c.client.getSchedule(id), /^scheduleId must be a UUID/],
  ['enqueue id', (c, id) => c.client.enqueue('orders.confirm', { n: 1 }, { id }), /^id must be a UUID/],
  ['enqueue dependsOn', (c, id) => c.client.enqueue('orders.confirm', { n: 1 }, { dependsOn: [id] }), /^dependsOn\[0\] must be a UUID/],
  ['schedule id', (c, id) => c.client.schedule({ id, name: 'orders.confirm', everyMs: 60_000 }), /^id must be a UUID/],
];

/** Operator actions straight on the store, with an actor the audit log cannot take: refused before the action. */
const BAD_ACTORS: Array<[string, string]> = [
  ['an empty actor', ''],
  ['an actor with a NUL', 'a\u0000b'],
  ['an actor with a newline', HOSTILE.newline],
  ['an actor of 201 characters', 'a'.repeat(201)],
];
const ACTOR_ENTRIES: Array<[string, (c: Ctx, actor: string) => Promise<unknown>]> = [
  ['store jobCancel actor', (c, actor) => c.store.jobCancel({ jobId: c.seed.scheduled, actor })],
  ['store jobReplay actor', (c, actor) => c.store.jobReplay({ jobId: c.seed.deadLettered, actor })],
  ['store queuePause actor', (c, actor) => c.store.queuePause({ queue: 'default', actor })],
  ['store queueResume actor', (c, actor) => c.store.queueResume({ queue: 'paused', actor })],
  ['store concurrencyLimitSet actor', (c, actor) => c.store.concurrencyLimitSet({ target: { key: TENANT_KEY }, max: 1, actor })],
];

export const REFUSALS: Refusal[] = [
  ...ACTOR_ENTRIES.flatMap(([entry, call]) =>
    BAD_ACTORS.map(([label, actor]) => ({ entry, label, call: (c: Ctx) => call(c, actor), error: InvalidArgumentError, field: /^actor must be 1 to 200 characters without control characters/ })),
  ),
  // Wire names: a name nobody registered is refused by the client before the store sees it.
  ...hostileRefusals('enqueue name', RULES.wireName, (v) => enqueue(v, { n: 1 }), InvalidArgumentError, /^No @Job handler is registered for "/),
  ...hostileRefusals('enqueueMany name', RULES.wireName, (v) => (c) => c.client.enqueueMany([{ name: 'orders.confirm', payload: 1 }, { name: v, payload: 1 }]), InvalidArgumentError, /^No @Job handler is registered for "/),
  ...hostileRefusals('schedule name', RULES.wireName, (v) => (c) => c.client.schedule({ name: v, everyMs: 60_000 }), InvalidArgumentError, /^No @Job handler is registered for "/),
  { entry: 'enqueue name', label: 'a name that is not a string', call: enqueue(42 as never, 1), error: InvalidArgumentError, field: /^No @Job handler is registered for 42;/ },

  // Queue names.
  ...hostileRefusals('enqueue queue', RULES.queue, (v) => withOptions({ queue: v }), InvalidArgumentError, /^queue must be 1 to 64 characters/),
  ...hostileRefusals('pause', RULES.queue, (v) => (c) => c.client.pause(v), InvalidArgumentError, /^queue must be 1 to 64 characters/),
  ...hostileRefusals('resume', RULES.queue, (v) => (c) => c.client.resume(v), InvalidArgumentError, /^queue must be 1 to 64 characters/),
  ...hostileRefusals('list queue', RULES.queue, (v) => (c) => c.client.list({ queue: v }), InvalidArgumentError, /^queue must be 1 to 64 characters/),
  ...hostileRefusals('setConcurrencyLimit queue', RULES.queue, (v) => (c) => c.client.setConcurrencyLimit({ queue: v }, 2), InvalidArgumentError, /^queue must be 1 to 64 characters/),
  ...hostileRefusals('schedule queue', RULES.queue, (v) => schedule({ queue: v }), InvalidArgumentError, /^queue must be 1 to 64 characters/),
  { entry: 'enqueue queue', label: 'a queue of 65 characters', call: withOptions({ queue: 'q'.repeat(65) }), error: InvalidArgumentError, field: /^queue must be 1 to 64 characters/ },
  { entry: 'pause', label: 'an empty queue name', call: (c) => c.client.pause(''), error: InvalidArgumentError, field: /^queue must be/ },

  // Ids: UUIDs only, everywhere.
  ...ID_ENTRIES.flatMap(([entry, call, field]) => hostileRefusals(entry, RULES.uuid, (v) => (c) => call(c, v), InvalidArgumentError, field)),
  { entry: 'cancel', label: 'an unknown job id', call: (c) => c.client.cancel(UNKNOWN_ID), error: JobNotFoundError, field: /^No job with id 0190a5a0-0000-7000-8000-00000000dead exists\.$/ },
  { entry: 'replay', label: 'an unknown job id', call: (c) => c.client.replay(UNKNOWN_ID), error: JobNotFoundError, field: /^No job with id / },
  { entry: 'replay', label: 'a job that is not dead-lettered', call: (c) => c.client.replay(c.seed.scheduled), error: IllegalTransitionError, field: /scheduled/ },
  { entry: 'cancel', label: 'a job that succeeded', call: (c) => c.client.cancel(c.seed.succeeded), error: IllegalTransitionError, field: /^Job [0-9a-f-]{36} already ended as succeeded and cannot be cancelled\.$/ },
  { entry: 'pauseSchedule', label: 'an unknown schedule id', call: (c) => c.client.pauseSchedule(UNKNOWN_ID), error: ScheduleNotFoundError, field: /^No schedule with id / },
  { entry: 'resumeSchedule', label: 'an unknown schedule id', call: (c) => c.client.resumeSchedule(UNKNOWN_ID), error: ScheduleNotFoundError, field: /^No schedule with id / },
  { entry: 'triggerSchedule', label: 'an unknown schedule id', call: (c) => c.client.triggerSchedule(UNKNOWN_ID), error: ScheduleNotFoundError, field: /^No schedule with id / },
  { entry: 'replaySchedule', label: 'an unknown schedule id', call: (c) => c.client.replaySchedule(UNKNOWN_ID), error: ScheduleNotFoundError, field: /^No schedule with id / },
  { entry: 'replaySchedule', label: 'a schedule that is not dead-lettered', call: (c) => c.client.replaySchedule(c.seed.schedule), error: IllegalTransitionError, field: /active/ },

  // Payloads.
  ...PAYLOADS.map(([label, payload, error, field]): Refusal => ({ entry: 'enqueue payload', label, call: enqueue('orders.confirm', payload), error, field })),
  ...PAYLOADS.map(([label, payload, error, field]): Refusal => ({
    entry: 'enqueueMany payload',
    label,
    call: (c) => c.client.enqueueMany([{ name: 'orders.confirm', payload: { fine: true } }, { name: 'orders.confirm', payload }]),
    error,
    field: new RegExp(field.source.replace('^payload', '^jobs\\[1\\]\\.payload').replace(' at payload', ' at jobs\\[1\\]\\.payload')),
  })),
  ...PAYLOADS.filter(([label]) => label !== 'an undefined payload').map(([label, payload, error, field]): Refusal => ({ entry: 'schedule payload', label, call: schedule({ payload }), error, field })),

  // Delays, instants, attempts.
  ...([Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, -1] as const).map((delayMs): Refusal => ({
    entry: 'enqueue delayMs', label: `a delay of ${delayMs}`, call: withOptions({ delayMs }), error: InvalidArgumentError, field: /^delayMs must be a finite number of milliseconds at or above 0/,
  })),
  { entry: 'enqueue delayMs', label: 'a delay over 100 years', call: withOptions({ delayMs: 1e300 }), error: InvalidArgumentError, field: /^delayMs must be at most 3153600000000 milliseconds \(100 years\)/ },
  { entry: 'enqueue delayMs', label: 'a delay given as a string', call: withOptions({ delayMs: '5' }), error: InvalidArgumentError, field: /^delayMs must be a finite number/ },
  { entry: 'enqueue runAt', label: 'an invalid Date', call: withOptions({ runAt: new Date('nope') }), error: InvalidArgumentError, field: /^runAt must be a valid Date/ },
  { entry: 'enqueue runAt', label: 'the earliest Date JavaScript has', call: withOptions({ runAt: new Date(-8.64e15) }), error: InvalidArgumentError, field: /^runAt must fall in the years 0000 to 9999/ },
  { entry: 'enqueue runAt', label: 'the year 10000', call: withOptions({ runAt: new Date('+010000-01-01T00:00:00Z') }), error: InvalidArgumentError, field: /^runAt must fall in the years 0000 to 9999/ },
  { entry: 'enqueue runAt', label: 'runAt together with delayMs', call: withOptions({ runAt: new Date(), delayMs: 5 }), error: InvalidArgumentError, field: /^runAt and delayMs cannot both be set/ },
  ...([0, -1, 1e9, 1.5, Number.NaN, Number.POSITIVE_INFINITY] as const).map((maxAttempts): Refusal => ({
    entry: 'enqueue maxAttempts', label: `maxAttempts ${maxAttempts}`, call: withOptions({ maxAttempts }), error: InvalidArgumentError, field: /^maxAttempts must be a whole number from 1 to 10000/,
  })),
  { entry: 'enqueue options', label: 'an unknown option', call: withOptions({ maxAttempt: 3 }), error: InvalidArgumentError, field: /^maxAttempt is not a known enqueue option/ },
  { entry: 'enqueue options', label: 'an unknown option with a newline in its name', call: withOptions({ 'a\nb': 3 }), error: InvalidArgumentError, field: /^"a\\nb" is not a known enqueue option/ },
  { entry: 'enqueue options', label: 'options that are null', call: withOptions(null), error: InvalidArgumentError, field: /^options must be an object, got null\.$/ },
  { entry: 'enqueue options', label: 'options that are a string', call: withOptions('fast'), error: InvalidArgumentError, field: /^options must be an object, got "fast"\.$/ },
  {
    entry: 'enqueue manager',
    label: 'a manager that is not a transaction of this store',
    call: withOptions({ manager: { connection: {} } }),
    error: (store) => (store.capabilities.transactionalEnqueue ? InvalidArgumentError : CapabilityNotSupportedError),
    field: /manager|transaction/,
  },

  // Dependencies.
  { entry: 'enqueue dependsOn', label: 'an unknown parent', call: withOptions({ dependsOn: [UNKNOWN_ID] }), error: InvalidArgumentError, field: /^Job [0-9a-f-]{36} depends on 0190a5a0-0000-7000-8000-00000000dead, which does not exist\.$/ },
  { entry: 'enqueue dependsOn', label: 'the job itself', call: withOptions({ id: UNKNOWN_ID, dependsOn: [UNKNOWN_ID] }), error: InvalidArgumentError, field: /cannot depend on itself/ },
  { entry: 'enqueue dependsOn', label: 'a parent named twice', call: (c) => c.client.enqueue('orders.confirm', 1, { dependsOn: [c.seed.scheduled, c.seed.scheduled] }), error: InvalidArgumentError, field: /^dependsOn names [0-9a-f-]{36} twice\.$/ },
  { entry: 'enqueue dependsOn', label: 'a string instead of an array', call: withOptions({ dependsOn: UNKNOWN_ID }), error: InvalidArgumentError, field: /^dependsOn must be an array/ },
  { entry: 'enqueue dependsOn', label: 'more than 10,000 parents', call: withOptions({ dependsOn: Array.from({ length: 10_001 }, () => UNKNOWN_ID) }), error: InvalidArgumentError, field: /^dependsOn must be an array of at most 10000 job ids/ },
  { entry: 'enqueue dependencyMode', label: 'a mode without dependsOn', call: withOptions({ dependencyMode: 'on_success' }), error: InvalidArgumentError, field: /^dependencyMode needs dependsOn/ },
  { entry: 'enqueue dependencyMode', label: 'an unknown mode', call: (c) => c.client.enqueue('orders.confirm', 1, { dependsOn: [c.seed.scheduled], dependencyMode: 'whenever' }), error: InvalidArgumentError, field: /^dependencyMode must be "on_success", "on_any_terminal" or "on_failure"/ },
  {
    entry: 'enqueueMany dependsOn',
    label: 'a cycle of two jobs',
    call: (c) =>
      c.client.enqueueMany([
        { id: '0190a5a0-0000-7000-8000-0000000000a1', name: 'orders.confirm', payload: 1, dependsOn: ['0190a5a0-0000-7000-8000-0000000000a2'] },
        { id: '0190a5a0-0000-7000-8000-0000000000a2', name: 'orders.confirm', payload: 2, dependsOn: ['0190a5a0-0000-7000-8000-0000000000a1'] },
      ]),
    error: InvalidArgumentError,
    field: /^dependsOn forms a cycle: .+ -> .+\.$/,
  },
  {
    entry: 'enqueueMany dependsOn',
    label: 'a cycle of three jobs after a fine one',
    call: (c) =>
      c.client.enqueueMany([
        { name: 'orders.confirm', payload: 0 },
        { id: '0190a5a0-0000-7000-8000-0000000000b1', name: 'orders.confirm', payload: 1, dependsOn: ['0190a5a0-0000-7000-8000-0000000000b3'] },
        { id: '0190a5a0-0000-7000-8000-0000000000b2', name: 'orders.confirm', payload: 2, dependsOn: ['0190a5a0-0000-7000-8000-0000000000b1'] },
        { id: '0190a5a0-0000-7000-8000-0000000000b3', name: 'orders.confirm', payload: 3, dependsOn: ['0190a5a0-0000-7000-8000-0000000000b2'] },
      ]),
    error: InvalidArgumentError,
    field: /^dependsOn forms a cycle/,
  },

  // enqueueMany as a whole.
  { entry: 'enqueueMany', label: 'a jobs argument that is not an array', call: (c) => c.client.enqueueMany({ name: 'orders.confirm' }), error: InvalidArgumentError, field: /^enqueueMany needs an array of jobs\.$/ },
  { entry: 'enqueueMany', label: 'a null job', call: (c) => c.client.enqueueMany([{ name: 'orders.confirm', payload: 1 }, null]), error: InvalidArgumentError, field: /^jobs\[1\] must be an object/ },
  { entry: 'enqueueMany', label: 'options that are null', call: (c) => c.client.enqueueMany([{ name: 'orders.confirm', payload: 1 }], null), error: InvalidArgumentError, field: /^options must be an object/ },
  {
    entry: 'enqueueMany',
    label: 'the same id twice',
    call: (c) => c.client.enqueueMany([{ id: UNKNOWN_ID, name: 'orders.confirm', payload: 1 }, { id: UNKNOWN_ID, name: 'orders.confirm', payload: 2 }]),
    error: InvalidArgumentError,
    field: /appears twice in one enqueueMany call/,
  },

  // Concurrency keys and limits.
  ...hostileRefusals('enqueue concurrencyKey', RULES.key, (v) => withOptions({ concurrencyKey: v }), InvalidArgumentError, /^concurrencyKey must be 1 to 200 characters without control characters/),
  ...hostileRefusals('@Job concurrencyKey result', RULES.key, (v) => enqueue('keyed.job', { key: v }), InvalidArgumentError, /^concurrencyKey must be 1 to 200 characters without control characters/),
  ...hostileRefusals('setConcurrencyLimit key', RULES.key, (v) => (c) => c.client.setConcurrencyLimit({ key: v }, 2), InvalidArgumentError, /^key must be 1 to 200 characters without control characters/),
  ...(['', 'k'.repeat(201), 'a\u0000b', 'a\ud800b', 'tab\there'] as const).flatMap((key): Refusal[] => [
    { entry: 'enqueue concurrencyKey', label: `the key ${JSON.stringify(key.slice(0, 20))}`, call: withOptions({ concurrencyKey: key }), error: InvalidArgumentError, field: /^concurrencyKey must be 1 to 200 characters/ },
    { entry: 'setConcurrencyLimit key', label: `the key ${JSON.stringify(key.slice(0, 20))}`, call: (c) => c.client.setConcurrencyLimit({ key }, 2), error: InvalidArgumentError, field: /^key must be 1 to 200 characters/ },
  ]),
  { entry: '@Job concurrencyKey result', label: 'a function that throws (quoting the payload)', call: enqueue('key.throws', { secret: 'p4yl0ad' }), error: InvalidArgumentError, field: /^The concurrencyKey function of @Job 'key.throws' threw for this payload \(Error\); nothing was written\.$/ },
  { entry: '@Job concurrencyKey result', label: 'a function that throws a Proxy whose every trap throws', call: enqueue('key.hostile', {}), error: InvalidArgumentError, field: /^The concurrencyKey function of @Job 'key.hostile' threw for this payload \(object\); nothing was written\.$/ },
  { entry: '@Job concurrencyKey result', label: 'a function that returns a number', call: enqueue('keyed.job', { key: 7 }), error: InvalidArgumentError, field: /^The concurrencyKey function of @Job 'keyed.job' must return a non-empty string, got 7\.$/ },
  ...([0, -1, 1e9, 1.5, Number.NaN, Number.POSITIVE_INFINITY, '3'] as const).flatMap((max): Refusal[] => [
    { entry: 'setConcurrencyLimit max', label: `a limit of ${typeof max === 'string' ? JSON.stringify(max) : max}`, call: (c) => c.client.setConcurrencyLimit({ key: TENANT_KEY }, max), error: InvalidArgumentError, field: /^max must be a whole number from 1 to 10000/ },
    { entry: 'enqueue concurrencyLimit', label: `a limit of ${typeof max === 'string' ? JSON.stringify(max) : max}`, call: withOptions({ concurrencyKey: 'k', concurrencyLimit: max }), error: InvalidArgumentError, field: /^concurrencyLimit must be a whole number from 1 to 10000/ },
  ]),
  { entry: 'enqueue concurrencyLimit', label: 'a limit without a key', call: withOptions({ concurrencyLimit: 2 }), error: InvalidArgumentError, field: /^concurrencyLimit needs a concurrencyKey or a group\.$/ },
  // A group (issue 39 item 1) is a concurrency key by default: the same rule.
  ...hostileRefusals('enqueue group', RULES.key, (v) => withOptions({ group: v }), InvalidArgumentError, /^group must be 1 to 200 characters without control characters/),
  ...(['', 'k'.repeat(201), 'a\u0000b', 'a\ud800b', 'tab\there', 42] as const).map((group): Refusal => ({
    entry: 'enqueue group', label: `the group ${JSON.stringify(typeof group === 'string' ? group.slice(0, 20) : group)}`, call: withOptions({ group }), error: InvalidArgumentError, field: /^group must be 1 to 200 characters/,
  })),
  // Unique keys and per-enqueue retry (issue 19 items 9 and 10): the same rule as a concurrency key.
  ...hostileRefusals('enqueue uniqueKey', RULES.key, (v) => withOptions({ uniqueKey: v }), InvalidArgumentError, /^uniqueKey must be 1 to 200 characters without control characters/),
  ...(['', 'k'.repeat(201), 'a\u0000b', 'a\ud800b', 'tab\there', 42] as const).map((key): Refusal => ({
    entry: 'enqueue uniqueKey', label: `the key ${JSON.stringify(typeof key === 'string' ? key.slice(0, 20) : key)}`, call: withOptions({ uniqueKey: key }), error: InvalidArgumentError, field: /^uniqueKey must be 1 to 200 characters/,
  })),
  { entry: 'enqueue uniqueKeyMode', label: 'an unknown mode', call: withOptions({ uniqueKey: 'k', uniqueKeyMode: 'merge' }), error: InvalidArgumentError, field: /^uniqueKeyMode must be "keep" or "replace", got "merge"\.$/ },
  { entry: 'enqueue uniqueKeyMode', label: 'a mode without a key', call: withOptions({ uniqueKeyMode: 'replace' }), error: InvalidArgumentError, field: /^uniqueKeyMode needs a uniqueKey\.$/ },
  ...([
    ['the shorthand baseMs', { baseMs: 0 }, /^retry\.baseMs is not a retry option/],
    ['a number', 5, /^retry must be an object/],
    ['a negative base', { baseDelayMs: -1 }, /^retry\.baseDelayMs must be a finite number/],
    ['a cap below the base', { baseDelayMs: 10, maxDelayMs: 1 }, /^retry\.maxDelayMs must be a finite number of milliseconds at or above baseDelayMs \(10\)/],
    ['jitter as a string', { jitter: 'no' }, /^retry\.jitter must be true or false/],
  ] as const).map(([label, retry, field]): Refusal => ({ entry: 'enqueue retry', label, call: withOptions({ retry }), error: InvalidArgumentError, field })),
  { entry: 'setConcurrencyLimit target', label: 'no target', call: (c) => c.client.setConcurrencyLimit(null, 2), error: InvalidArgumentError, field: /^A concurrency limit needs a target/ },
  { entry: 'setConcurrencyLimit target', label: 'an empty target', call: (c) => c.client.setConcurrencyLimit({}, 2), error: InvalidArgumentError, field: /^A concurrency limit needs a target/ },

  // Schedules: cron patterns, time zones, intervals.
  { entry: 'schedule', label: 'a spec that is null', call: (c) => c.client.schedule(null), error: InvalidArgumentError, field: /^A schedule must be an object/ },
  ...(['61 * * * *', 'every day', '* * * * * * * *', '', '0 9 * * *\n0 10 * * *', 'x'.repeat(201), '0 9 * * mon-fri;drop'] as const).map((pattern): Refusal => ({
    entry: 'schedule cron', label: `the pattern ${JSON.stringify(pattern.slice(0, 30))}`, call: (c) => c.client.schedule({ name: 'orders.confirm', cron: pattern }), error: InvalidArgumentError, field: /^cron /,
  })),
  ...(['Mars/Olympus', "o'brien", 'Europe/Berlin\n', '', 'UTC+25', 'z'.repeat(65)] as const).map((timezone): Refusal => ({
    entry: 'schedule timezone', label: `the time zone ${JSON.stringify(timezone.slice(0, 30))}`, call: cron({ timezone }), error: InvalidArgumentError, field: /^timezone must be an IANA time zone/,
  })),
  { entry: 'schedule', label: 'both cron and everyMs', call: cron({ everyMs: 60_000 }), error: InvalidArgumentError, field: /^A schedule needs exactly one of cron or everyMs\.$/ },
  { entry: 'schedule', label: 'neither cron nor everyMs', call: (c) => c.client.schedule({ name: 'orders.confirm' }), error: InvalidArgumentError, field: /^A schedule needs exactly one of cron or everyMs\.$/ },
  ...([0, 999, -1000, Number.NaN, Number.POSITIVE_INFINITY, 1.5e3 + 0.5] as const).map((everyMs): Refusal => ({
    entry: 'schedule everyMs', label: `an interval of ${everyMs}`, call: schedule({ everyMs }), error: InvalidArgumentError, field: /^everyMs must be/,
  })),
  { entry: 'schedule startAt', label: 'an invalid Date', call: schedule({ startAt: new Date('nope') }), error: InvalidArgumentError, field: /^startAt must be a valid Date/ },
  { entry: 'schedule startAt', label: 'the earliest Date JavaScript has', call: schedule({ startAt: new Date(-8.64e15) }), error: InvalidArgumentError, field: /^startAt must fall in the years 0000 to 9999/ },
  { entry: 'schedule startAt', label: 'startAt on a cron schedule', call: cron({ startAt: new Date() }), error: InvalidArgumentError, field: /^startAt only applies to everyMs schedules\.$/ },
  { entry: 'schedule timezone', label: 'a time zone on an interval schedule', call: schedule({ timezone: 'UTC' }), error: InvalidArgumentError, field: /^timezone only applies to cron schedules\.$/ },
  { entry: 'schedule catchUp', label: 'an unknown catch-up policy', call: schedule({ catchUp: 'all' }), error: InvalidArgumentError, field: /^catchUp must be "skip" or "coalesce"/ },
  { entry: 'schedule noOverlap', label: 'a string', call: schedule({ noOverlap: 'yes' }), error: InvalidArgumentError, field: /^noOverlap must be true or false/ },
  ...([-1, Number.NaN, 1e300] as const).map((misfireGraceMs): Refusal => ({
    entry: 'schedule misfireGraceMs', label: `a grace of ${misfireGraceMs}`, call: schedule({ misfireGraceMs }), error: InvalidArgumentError, field: /^misfireGraceMs must be/,
  })),
  ...([0, 1e9] as const).map((maxAttempts): Refusal => ({
    entry: 'schedule maxAttempts', label: `maxAttempts ${maxAttempts}`, call: schedule({ maxAttempts }), error: InvalidArgumentError, field: /^maxAttempts must be a whole number from 1 to 10000/,
  })),
  { entry: 'schedule', label: 'an unknown option', call: schedule({ every: 5 }), error: InvalidArgumentError, field: /^every is not a known schedule option/ },

  // Observer ids and worker ids reach the store's own tables.
  ...hostileRefusals('observer id', RULES.key, (v) => (c) => c.store.observerLease({ observer: v, workerId: 'probe', leaseMs: 1_000 }), InvalidArgumentError, /^observer must be 1 to 200 characters without control characters/),
  ...(['w\u0000', 'a\nb', ''] as const).map((workerId): Refusal => ({
    entry: 'claim workerId', label: `the worker id ${JSON.stringify(workerId)}`, call: (c) => c.store.jobClaim({ workerId, limit: 1, queues: ['default'], leaseMs: 1_000 }), error: InvalidArgumentError, field: /^workerId must be 1 to 256 characters without control characters/,
  })),

  // Listings and history options.
  { entry: 'list', label: 'an unknown state', call: (c) => c.client.list({ state: 'done' }), error: InvalidArgumentError, field: /^state must be a job state/ },
  ...([0, -5, 5_000, Number.NaN, 2.5] as const).flatMap((limit): Refusal[] => [
    { entry: 'list limit', label: `a limit of ${limit}`, call: (c) => c.client.list({ limit }), error: InvalidArgumentError, field: /^limit must be a whole number from 1 to 1000/ },
    { entry: 'listDeadLettered limit', label: `a limit of ${limit}`, call: (c) => c.client.listDeadLettered(limit), error: InvalidArgumentError, field: /^limit must be a whole number from 1 to 1000/ },
  ]),
  ...(['a\nb', 'a\u0000b', ''] as const).map((name): Refusal => ({
    entry: 'list name', label: `the name filter ${JSON.stringify(name)}`, call: (c) => c.client.list({ name }), error: InvalidArgumentError, field: /^name must be 1 to 256 characters without control characters/,
  })),
];

/** Hostile identifiers a field accepts: each must be stored and read back byte for byte. */
interface Acceptance {
  readonly entry: string;
  readonly name: HostileName;
  /** Performs the call and returns the value as read back through the public API. */
  readonly run: (ctx: Ctx) => Promise<unknown>;
}

const accepted = (entry: string, rule: Rule, run: (value: string) => (c: Ctx) => Promise<unknown>): Acceptance[] =>
  HOSTILE_NAMES.filter((name) => rule[name] === 'accepted').map((name) => ({ entry, name, run: run(HOSTILE[name]) }));

export const ACCEPTANCES: Acceptance[] = [
  ...accepted('enqueue name', RULES.wireName, (v) => async (c) => (await c.client.get((await c.client.enqueue(v, { v })).id))!.name),
  ...accepted('enqueue queue', RULES.queue, (v) => async (c) => (await c.client.get((await c.client.enqueue('orders.confirm', 1, { queue: v })).id))!.queue),
  ...accepted('pause', RULES.queue, (v) => async (c) => {
    await c.client.pause(v);
    const [entry] = await c.store.auditList({ limit: 1 });
    expect(entry).toMatchObject({ action: 'queue.pause' });
    return entry!.target;
  }),
  ...accepted('setConcurrencyLimit queue', RULES.queue, (v) => async (c) => {
    await c.client.setConcurrencyLimit({ queue: v }, 4);
    return (await c.client.listConcurrencyLimits()).find((l: { queue?: string }) => l.queue === v)?.queue;
  }),
  ...accepted('schedule name', RULES.wireName, (v) => async (c) => (await c.client.getSchedule((await c.client.schedule({ name: v, everyMs: 60_000 })).id))!.name),
  ...accepted('setConcurrencyLimit key', RULES.key, (v) => async (c) => {
    await c.client.setConcurrencyLimit({ key: v }, 3);
    return (await c.client.listConcurrencyLimits()).find((l: { key?: string }) => l.key === v)?.key;
  }),
  ...accepted('enqueue concurrencyKey', RULES.key, (v) => async (c) => {
    // The job's own key is internal; the limit it declares for the key reads it back.
    await c.client.enqueue('orders.confirm', 1, { concurrencyKey: `job:${v}`, concurrencyLimit: 5 });
    return (await c.client.listConcurrencyLimits()).find((l: { key?: string }) => l.key === `job:${v}`)?.key.slice('job:'.length);
  }),
  ...accepted('enqueue uniqueKey', RULES.key, (v) => async (c) => (await c.client.get((await c.client.enqueue('orders.confirm', 1, { uniqueKey: v })).id))!.uniqueKey),
  // Observer ids are declared with @OnJobTransition and kept as the observer's cursor in the store.
  ...accepted('observer id', RULES.key, (v) => async (c) => (await c.store.observerLease({ observer: v, workerId: 'probe', leaseMs: 1_000 }))?.observer),
  ...accepted('@Job concurrencyKey result', RULES.key, (v) => async (c) => {
    await c.client.enqueue('keyed.job', { key: `dec:${v}` });
    return (await c.client.listConcurrencyLimits()).find((l: { key?: string }) => l.key === `dec:${v}`)?.key.slice('dec:'.length);
  }),
];

/** Payloads that look odd but are JSON every store keeps: each must read back deep-equal. */
export const ODD_PAYLOADS: Array<[string, unknown]> = [
  ['SQL in a string', { text: "'); DROP TABLE jobs; --", q: 'a"b', d: 'a$$b$$' }],
  ['quotes and newlines in keys', { "o'brien": 1, 'a"b': 2, 'a\nb': 3, ';drop': 4 }],
  ['astral characters and U+FFFD', { emoji: '😀', replacement: '\ufffd', rtl: '\u202e' }],
  ['nesting of exactly 64 levels', (() => {
    let v: unknown = 1;
    for (let i = 0; i < 64; i++) v = [v];
    return v;
  })()],
  ['a payload of exactly maxPayloadBytes', 'x'.repeat(MAX_PAYLOAD_BYTES - 2)],
];

/** Module options with bad values, refused at boot before the store migrates or writes anything. */
export const BAD_MODULE_OPTIONS: Array<[string, SchedulerModuleOptions, RegExp]> = [
  ...HOSTILE_NAMES.filter((n) => RULES.queue[n] === 'refused').map((n): [string, SchedulerModuleOptions, RegExp] => [`queues with ${n}`, { queues: [HOSTILE[n]] }, /^queues\[0\] must be 1 to 64 characters/]),
  ['no queues', { queues: [] }, /^queues must be a non-empty array/],
  ['a misspelt option', { concurency: 4 } as SchedulerModuleOptions, /^concurency is not a known SchedulerModule option \(did you mean concurrency\?\); see docs\/module-options\.md for the options\.$/],
  ['two unknown options', { concurrency: 2, pollIntervallMs: 5, leaseTime: 1 } as SchedulerModuleOptions, /^pollIntervallMs and leaseTime are not known SchedulerModule options \(did you mean pollIntervalMs\?\);/],
  ...([0, -1, Number.NaN, Number.POSITIVE_INFINITY, 1e9, 2.5] as const).map((v): [string, SchedulerModuleOptions, RegExp] => [`concurrency ${v}`, { concurrency: v }, /^concurrency must be a whole number from 1 to 10000/]),
  ['a lease shorter than two heartbeats', { leaseMs: 15_000, heartbeatIntervalMs: 10_000 }, /^leaseMs \(15000\) must cover at least two heartbeats/],
  ['leaseMs NaN', { leaseMs: Number.NaN }, /^leaseMs must be a whole number/],
  ['heartbeatIntervalMs 0', { heartbeatIntervalMs: 0 }, /^heartbeatIntervalMs must be a whole number/],
  ['pollIntervalMs Infinity', { pollIntervalMs: Number.POSITIVE_INFINITY }, /^pollIntervalMs must be a whole number/],
  ['claimBatchSize 0', { claimBatchSize: 0 }, /^claimBatchSize must be a whole number/],
  ['shutdownGraceMs -1', { shutdownGraceMs: -1 }, /^shutdownGraceMs must be a whole number/],
  ['maintenanceIntervalMs NaN', { maintenanceIntervalMs: Number.NaN }, /^maintenanceIntervalMs must be a whole number/],
  ['retentionMs -1', { retentionMs: -1 }, /^retentionMs must be a whole number/],
  ['historyPerJob 0', { historyPerJob: 0 }, /^historyPerJob must be a whole number/],
  ['observerPollIntervalMs 0', { observerPollIntervalMs: 0 }, /^observerPollIntervalMs must be a whole number/],
  ['scheduleCheckIntervalMs as a string', { scheduleCheckIntervalMs: '15s' as never }, /^scheduleCheckIntervalMs must be a whole number .*, got "15s"\.$/],
  ['scheduling as a string', { scheduling: 'yes' as never }, /^scheduling must be true or false, got "yes"\.$/],
  ['retry.baseDelayMs NaN', { retry: { baseDelayMs: Number.NaN } }, /^retry\.baseDelayMs must be a finite number/],
  ['retry.maxDelayMs over 100 years', { retry: { maxDelayMs: 1e300 } }, /^retry\.maxDelayMs must be at most 3153600000000 milliseconds/],
  ['retry as a string', { retry: 'fast' as never }, /^retry must be an object/],
  ['observerRetry.jitter as a string', { observerRetry: { jitter: 'no' as never } }, /^observerRetry\.jitter must be true or false/],
  ['autoStart as a string', { autoStart: 'no' as never }, /^autoStart must be true or false, got "no"\.$/],
  ['migrationsRun as a number', { migrationsRun: 0 as never }, /^migrationsRun must be true or false, got 0\.$/],
  ['asyncClaimCommit as a string', { asyncClaimCommit: 'yes' as never }, /^asyncClaimCommit must be true or false, got "yes"\.$/],
  ['asyncClaimCommit beside a store passed in', { asyncClaimCommit: true }, /^asyncClaimCommit shapes the store the module builds, but a store was passed in/],
  ['preparedStatements as a string', { preparedStatements: 'no' as never }, /^preparedStatements must be true or false, got "no"\.$/],
  ['poolMode beside a store passed in', { poolMode: 'transaction' }, /^poolMode shapes the store the module builds, but a store was passed in/],
  ['listenUrl beside a store passed in', { listenUrl: 'postgres://db/x' }, /^listenUrl shapes the store the module builds, but a store was passed in/],
  ['maxAttempts 0', { maxAttempts: 0 }, /^maxAttempts must be a whole number from 1 to 10000/],
  ['maxAttempts 1e9', { maxAttempts: 1e9 }, /^maxAttempts must be a whole number from 1 to 10000/],
  ...HOSTILE_NAMES.filter((n) => RULES.queue[n] === 'refused').map((n): [string, SchedulerModuleOptions, RegExp] => [`queueLimits with ${n}`, { queueLimits: { [HOSTILE[n]]: 2 } }, /^queueLimits key must be 1 to 64 characters/]),
  ['a queue limit of 0', { queueLimits: { default: 0 } }, /^queueLimits\.default must be a whole number from 1 to 10000/],
  ['queueLimits as a string', { queueLimits: 'none' as never }, /^queueLimits must be an object/],
  ...(['', 'w\u0000', 'a\nb', 'w'.repeat(201)] as const).map((workerId): [string, SchedulerModuleOptions, RegExp] => [`workerId ${JSON.stringify(workerId.slice(0, 10))}`, { workerId }, /^workerId must be 1 to 200 characters without control characters/]),
  ['historyPolicy "sometimes"', { historyPolicy: 'sometimes' as never }, /^historyPolicy must be "off", "transitions" or "transitions_and_errors"/],
  ['finish "sometimes"', { finish: 'sometimes' as never }, /^finish must be "keep" or "lean", got "sometimes"\.$/],
  ['finish "lean" beside a store passed in that keeps', { finish: 'lean' }, /^finish shapes the store the module builds, but a store was passed in; set finish on that store instead\.$/],
];

/** Naming options: what each store does with hostile schema and table prefix names. */
export const BAD_NAMING: Array<[string, SchedulerModuleOptions]> = [
  ...HOSTILE_NAMES.map((n): [string, SchedulerModuleOptions] => [`schema ${JSON.stringify(HOSTILE[n])}`, { schema: HOSTILE[n] }]),
  ...HOSTILE_NAMES.map((n): [string, SchedulerModuleOptions] => [`tablePrefix ${JSON.stringify(HOSTILE[n])}`, { tablePrefix: HOSTILE[n] }]),
  ['tablePrefix "Upper_"', { tablePrefix: 'Upper_' }],
  ['limits.maxPayloadBytes 0', { limits: { maxPayloadBytes: 0 } }],
  ['limits.maxPayloadBytes NaN', { limits: { maxPayloadBytes: Number.NaN } }],
  ['issue 19: limits.maxJsonDepth 1e6, deeper than every store keeps', { limits: { maxJsonDepth: 1e6 } }],
  ['an unknown limit', { limits: { maxPayloadByte: 10 } as never }],
];

const PROVIDERS = [OrdersConfirmJob, DottedNameJob, LongNameJob, KeyedJob, ThrowingKeyJob, HostileKeyJob];

async function seed(client: Client, store: JobStore): Promise<Seed> {
  const { id: scheduled } = await client.enqueue('orders.confirm', { seed: 1 });
  const { id: deadLettered } = await client.enqueue('orders.confirm', { seed: 2 }, { queue: 'seed' });
  const [claimed] = await store.jobClaim({ workerId: 'seed', limit: 1, queues: ['seed'], leaseMs: 60_000 });
  await store.jobCompleteMany({ workerId: 'seed', outcomes: [{ jobId: claimed!.id, attempt: claimed!.attempt, kind: 'dead_lettered', error: 'seeded' }] });
  const { id: succeeded } = await client.enqueue('orders.confirm', { seed: 5 }, { queue: 'seed' });
  const [ran] = await store.jobClaim({ workerId: 'seed', limit: 1, queues: ['seed'], leaseMs: 60_000 });
  await store.jobCompleteMany({ workerId: 'seed', outcomes: [{ jobId: ran!.id, attempt: ran!.attempt, kind: 'succeeded' }] });
  const { id: waiting } = await client.enqueue('orders.confirm', { seed: 3 }, { dependsOn: [scheduled], concurrencyKey: TENANT_KEY, concurrencyLimit: 3 });
  const { id: scheduleId } = await client.schedule({ name: 'orders.confirm', everyMs: 60_000, payload: { seed: 4 } });
  await client.pause('paused');
  await client.setConcurrencyLimit({ queue: 'default' }, 7);
  return { scheduled, deadLettered, succeeded, waiting, schedule: scheduleId };
}

/** The error class a case expects on this store. */
function expected(refusal: Refusal, store: JobStore): ErrorClass {
  return typeof refusal.error === 'function' && !(refusal.error.prototype instanceof Error) ? (refusal.error as (s: JobStore) => ErrorClass)(store) : (refusal.error as ErrorClass);
}

/**
 * The catalogue on one store: every refusal leaves every table as it was, every hostile
 * identifier a field accepts round-trips byte for byte, and bad module options stop the boot
 * before the store migrates.
 */
export function badInputCases(createTarget: () => Promise<BadInputTarget>): void {
  let target: BadInputTarget;
  let opened: OpenedStore;
  let app: INestApplicationContext;
  const ctx = {} as { client: Client; store: JobStore; seed: Seed };

  beforeAll(async () => {
    target = await createTarget();
    opened = await target.open();
    const moduleRef = await Test.createTestingModule({
      imports: [SchedulerModule.forRoot({ store: opened.store, autoStart: false, queues: ['default', HOSTILE.dotted] })],
      providers: PROVIDERS,
    }).compile();
    app = await moduleRef.init();
    ctx.client = app.get(SchedulerClient) as unknown as Client;
    ctx.store = opened.store;
    ctx.seed = await seed(ctx.client, ctx.store);
  });

  afterAll(async () => {
    await app?.close();
    await target?.teardown();
  });

  describe('refused with a typed error, one sentence, and every table unchanged', () => {
    it.each(REFUSALS.map((r) => [r.entry, r.label, r] as const))('%s: %s', async (_entry, _label, refusal) => {
      const before = await opened.snapshot();
      const error = await thrown(() => refusal.call(ctx));
      expectTypedRefusal(error, expected(refusal, ctx.store), refusal.field);
      expect(await opened.snapshot()).toEqual(before);
    });
  });

  describe('accepted, stored and read back byte for byte', () => {
    it.each(ACCEPTANCES.map((a) => [a.entry, a.name, a] as const))('%s: the %s identifier', async (_entry, name, acceptance) => {
      const value = HOSTILE[name];
      expect(await acceptance.run(ctx)).toBe(value);
      // The raw rows hold the exact text: it went in as a bound parameter, not as SQL.
      expect(JSON.stringify(await opened.snapshot())).toContain(JSON.stringify(value).slice(1, -1));
      expect(await ctx.client.get(ctx.seed.scheduled)).toMatchObject({ state: 'scheduled', payload: { seed: 1 } });
    });

    it.each(ODD_PAYLOADS)('a payload with %s', async (_label, payload) => {
      const { id } = await ctx.client.enqueue('orders.confirm', payload);
      expect((await ctx.client.get(id))!.payload).toEqual(payload);
      const { id: scheduleId } = await ctx.client.schedule({ name: 'orders.confirm', everyMs: 60_000, payload });
      expect((await ctx.client.getSchedule(scheduleId))!.payload).toEqual(payload);
    });

    it('error text PostgreSQL cannot hold is repaired the same way in every store, so a failure is always recorded', async () => {
      const { id } = await ctx.client.enqueue('orders.confirm', { n: 'error-text' }, { queue: 'errors', maxAttempts: 1 });
      const [claimed] = await ctx.store.jobClaim({ workerId: 'w', limit: 1, queues: ['errors'], leaseMs: 60_000 });
      expect(claimed?.id).toBe(id);
      const results = await ctx.store.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId: id, attempt: 1, kind: 'failed', error: "Error: a\u0000b \ud800 o'brien", retryDelayMs: 0 }] });
      expect(results).toEqual([{ jobId: id, attempt: 1, status: 'applied', state: 'dead_lettered' }]);
      expect((await ctx.client.get(id))!.lastError).toBe("Error: a\ufffdb \ufffd o'brien");
      expect((await ctx.client.history(id)).at(-1)).toMatchObject({ state: 'dead_lettered', error: "Error: a\ufffdb \ufffd o'brien" });
    });

    it('unknown ids that are well-formed read as absent, and removing one changes nothing', async () => {
      const before = await opened.snapshot();
      expect(await ctx.client.get(UNKNOWN_ID)).toBeNull();
      expect(await ctx.client.getSchedule(UNKNOWN_ID)).toBeNull();
      expect(await ctx.client.history(UNKNOWN_ID)).toEqual([]);
      expect(await ctx.client.removeSchedule(UNKNOWN_ID)).toBe(false);
      expect(await opened.snapshot()).toEqual(before);
    });
  });

  describe('module options refused at boot, before anything is written', () => {
    it.each(BAD_MODULE_OPTIONS)('%s, on this store', async (_label, options, field) => {
      const before = await opened.snapshot();
      const error = await thrown(() => boot({ store: opened.store, ...options }));
      expectTypedRefusal(error, InvalidArgumentError, field);
      expect(await opened.snapshot()).toEqual(before);
    });

    it.each(BAD_MODULE_OPTIONS)('%s, through forRootAsync', async (_label, options, field) => {
      const before = await opened.snapshot();
      const error = await thrown(() => boot({ store: opened.store, ...options }, 'async'));
      expectTypedRefusal(error, InvalidArgumentError, field);
      expect(await opened.snapshot()).toEqual(before);
    });

    it.each(BAD_NAMING)('%s', async (_label, options) => {
      const tables = await opened.tables();
      const before = await opened.snapshot();
      // SQL stores build their own store on the DataSource from these options; memory passes its store.
      const error = await thrown(() => boot(opened.dataSource ? { dataSource: opened.dataSource, ...options } : { store: opened.store, ...options }));
      const naming = 'schema' in options || 'tablePrefix' in options;
      if (target.name === 'memory') {
        expectTypedRefusal(error, InvalidArgumentError, naming ? /^(schema|tablePrefix) shapes the store the module builds, but a store was passed in/ : /^limits\./);
      } else if (target.name === 'sqlite' && 'schema' in options) {
        expectTypedRefusal(error, InvalidArgumentError, /^schema only applies to PostgreSQL/);
      } else {
        expectTypedRefusal(error, naming ? InvalidIdentifierError : InvalidArgumentError, naming ? /^(schema|tablePrefix) must be a lower-case SQL identifier/ : /^limits\./);
      }
      expect(await opened.tables()).toEqual(tables);
      expect(await opened.snapshot()).toEqual(before);
    });

    it('a bad worker option stops a boot on a fresh database before any table is created', async () => {
      const tables = await opened.tables();
      const fresh = opened.dataSource ? { dataSource: opened.dataSource, tablePrefix: 'never_created_' } : { store: opened.store };
      expectTypedRefusal(await thrown(() => boot({ ...fresh, concurrency: 0 })), InvalidArgumentError, /^concurrency must be/);
      expectTypedRefusal(await thrown(() => boot({ ...fresh, queueLimits: { "o'brien": 1 } })), InvalidArgumentError, /^queueLimits key/);
      expect(await opened.tables()).toEqual(tables);
    });

    it('asyncClaimCommit on a DataSource the module builds a SQLite store on is refused (PostgreSQL builds one with it)', async () => {
      if (!opened.dataSource) {
        expect(target.name).toBe('memory'); // memory boots always pass a store: covered by the catalogue above
        return;
      }
      const before = await opened.snapshot();
      const options = { dataSource: opened.dataSource, asyncClaimCommit: true };
      if (target.name === 'sqlite') expectTypedRefusal(await thrown(() => boot(options)), InvalidArgumentError, /^asyncClaimCommit only applies to PostgreSQL; leave it unset on SQLite\.$/);
      else expect((createStore(options, opened.dataSource) as PostgresJobStore).asyncClaimCommit).toBe(true);
      expect(await opened.snapshot()).toEqual(before);
    });

    it('poolMode and listenUrl on a DataSource the module builds a SQLite store on are refused (PostgreSQL builds one with them, and checks them)', async () => {
      if (!opened.dataSource) {
        expect(target.name).toBe('memory');
        return;
      }
      const before = await opened.snapshot();
      if (target.name === 'sqlite') {
        expectTypedRefusal(await thrown(() => boot({ dataSource: opened.dataSource, poolMode: 'transaction' })), InvalidArgumentError, /^poolMode only applies to PostgreSQL; leave it unset on SQLite\.$/);
        expectTypedRefusal(await thrown(() => boot({ dataSource: opened.dataSource, listenUrl: 'postgres://db/x' })), InvalidArgumentError, /^listenUrl only applies to PostgreSQL; leave it unset on SQLite\.$/);
      } else {
        expect((createStore({ dataSource: opened.dataSource, poolMode: 'transaction' }, opened.dataSource) as PostgresJobStore).poolMode).toBe('transaction');
        expectTypedRefusal(await thrown(() => boot({ dataSource: opened.dataSource, listenUrl: 'postgres://db/x' })), InvalidArgumentError, /^listenUrl only applies with poolMode: 'transaction'/);
        expectTypedRefusal(await thrown(() => boot({ dataSource: opened.dataSource, poolMode: 'pooled' as never })), InvalidArgumentError, /^poolMode must be "session" or "transaction", got "pooled"\.$/);
      }
      expect(await opened.snapshot()).toEqual(before);
    });

    it('a useFactory that returns nothing is refused with a typed error', async () => {
      const error = await thrown(async () => {
        const moduleRef = await Test.createTestingModule({ imports: [SchedulerModule.forRootAsync({ useFactory: () => null as never })] }).compile();
        await moduleRef.close();
      });
      expectTypedRefusal(error, InvalidArgumentError, /^SchedulerModule options must be an object, got null\.$/);
    });
  });
}

/** Boots (and closes) the module with `options`, no worker; resolves only if the boot succeeded. */
export async function boot(options: SchedulerModuleOptions, style: 'sync' | 'async' = 'sync', providers: unknown[] = []): Promise<void> {
  const module =
    style === 'sync'
      ? SchedulerModule.forRoot({ autoStart: false, ...options })
      : SchedulerModule.forRootAsync({ useFactory: async () => ({ autoStart: false, ...options }) });
  const moduleRef = await Test.createTestingModule({ imports: [module], providers: providers as never }).compile();
  const app = await moduleRef.init();
  await app.close();
}
