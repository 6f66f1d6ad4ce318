import { newUuidV7 } from './new-uuid-v7.js';
import {
  assertDelayMs,
  assertInstant,
  assertMaxAttempts,
  assertPriority,
  assertRate,
  DEFAULT_PRIORITY,
  assertNonEmptyString,
  assertQueueName,
  assertUuid,
  assertWireName,
  checkOptions,
  checkRetryOverride,
  checkTraceContext,
  encodeJson,
  InvalidArgumentError,
  MAX_CONCURRENCY_KEY,
  showValue,
  type BatchCallbackKind,
  type DependencyMode,
  type SchedulerLimits,
} from '../core/index.js';
import type { EnqueueInput, Rate, SequenceAfterFailure, SequenceOptions, UniqueKeyMode } from './enqueue-input.types.js';
import { normalizeWindow, type JobWindow } from './window/job-window.js';

/** The queue a job lands in when none is named. */
export const DEFAULT_QUEUE = 'default';
/** Attempts a job gets when none are named. */
export const DEFAULT_MAX_ATTEMPTS = 10;

export type { DebounceOptions, EnqueueInput, Rate, SequenceAfterFailure, SequenceOptions, ThrottleOptions, UniqueKeyMode } from './enqueue-input.types.js';

/** A validated job, ready for an adapter to insert. */
export interface NewJob {
  readonly id: string;
  /**
   * True when the store generated the id for this call, so no stored job can hold it and the
   * insert need not check for one. Absent for caller-chosen ids and occurrence ids.
   */
  readonly freshId?: boolean;
  readonly name: string;
  readonly queue: string;
  /** JSON text. */
  readonly payload: string;
  /** An absolute instant, or null to use the store's clock plus `delayMs`. */
  readonly runAt: number | null;
  readonly delayMs: number;
  readonly maxAttempts: number;
  /** Lower first; 0 unless set. */
  readonly priority?: number;
  /** Set for jobs a schedule mints: their id is the occurrence id. */
  readonly scheduleId?: string | null;
  /** Parents, deduplicated, never the job itself. Empty when it has none. */
  readonly dependsOn?: readonly string[];
  readonly dependencyMode?: DependencyMode | null;
  readonly concurrencyKey?: string | null;
  /** The fair group, or null (docs/groups.md). */
  readonly group?: string | null;
  readonly concurrencyLimit?: number | null;
  /** The rate declared for `concurrencyKey`, or null. */
  readonly rateLimit?: Rate | null;
  readonly uniqueKey?: string | null;
  /** Set with `uniqueKey`. */
  readonly uniqueKeyMode?: UniqueKeyMode;
  /** The debounce or throttle window the job opens, or absent. A debounced job's `delayMs` is its window. */
  readonly window?: JobWindow;
  /** The sequence the job joins at the end of, or absent. */
  readonly sequence?: JobSequence;
  /**
   * The job it runs after: the sequence's tail when the enqueue took the sequence's lock, set by
   * the store (never by the caller). Absent for the first job of a sequence, or when that job is gone.
   */
  readonly sequenceAfter?: string;
  /** The batch the job belongs to, set by jobEnqueueBatch (never by the caller). */
  readonly batchId?: string;
  /** Set with `batchId` on a batch's callback job. */
  readonly batchCallback?: BatchCallbackKind;
  /** The retry override as JSON text, or null. */
  readonly retry?: string | null;
  /** The trace context to store with the job, or absent. */
  readonly traceparent?: string | null;
  readonly tracestate?: string | null;
}

const KNOWN_KEYS = new Set(['name', 'payload', 'id', 'queue', 'runAt', 'delayMs', 'priority', 'maxAttempts', 'dependsOn', 'dependencyMode', 'concurrencyKey', 'group', 'concurrencyLimit', 'rateLimit', 'uniqueKey', 'uniqueKeyMode', 'debounce', 'throttle', 'sequence', 'retry', 'traceContext']);

/** A validated sequence: its key and what the job does after a predecessor that failed for good. */
export interface JobSequence {
  readonly key: string;
  readonly afterFailure: SequenceAfterFailure;
}

/** Most parents one job may wait for. */
export const MAX_PARENTS = 10_000;
// Longest concurrency key, in characters: core holds it, as the limit-target rule checks it too.
export { MAX_CONCURRENCY_KEY };
/** Longest unique key, in characters. */
export const MAX_UNIQUE_KEY = 200;
/** Longest sequence key, in characters. */
export const MAX_SEQUENCE_KEY = 200;

/**
 * Validates and normalizes jobs before any write. Every problem is an InvalidArgumentError naming
 * the job's position when there are several.
 */
export function normalizeEnqueueMany(inputs: readonly EnqueueInput[], limits: SchedulerLimits): NewJob[] {
  if (!Array.isArray(inputs)) throw new InvalidArgumentError('enqueueMany needs an array of jobs.', 'inputs');
  const jobs = inputs.map((input, index) => normalizeEnqueue(input, limits, inputs.length > 1 ? index : undefined));
  const seen = new Set<string>();
  for (const job of jobs) {
    if (seen.has(job.id)) throw new InvalidArgumentError(`The job id ${job.id} appears twice in one enqueueMany call.`, 'id');
    seen.add(job.id);
  }
  return jobs;
}

/**
 * Checks one job to enqueue and fills in its defaults (id, queue, attempts, run time), giving the
 * {@link NewJob} a driver writes. `index` names the job's place in a batch in error messages.
 */
export function normalizeEnqueue(given: EnqueueInput, limits: SchedulerLimits, index?: number): NewJob {
  const where = index === undefined ? '' : `jobs[${index}].`;
  if (given === null || typeof given !== 'object' || Array.isArray(given)) {
    const subject = index === undefined ? 'The job' : `jobs[${index}]`;
    throw new InvalidArgumentError(`${subject} must be an object with a name and a payload.`, index === undefined ? 'input' : `jobs[${index}]`);
  }
  checkOptions(given, KNOWN_KEYS, { what: 'enqueue', where });
  const input = readOnce(given);
  const name = assertWireName(input.name, limits.maxNameLength, `${where}name`);
  const payload = encodeJson(input.payload, { argument: `${where}payload`, maxBytes: limits.maxPayloadBytes, maxDepth: limits.maxJsonDepth });
  const id = input.id === undefined ? newUuidV7() : assertUuid(input.id, `${where}id`);
  const queue = input.queue === undefined ? DEFAULT_QUEUE : assertQueueName(input.queue, `${where}queue`);
  const maxAttempts =
    input.maxAttempts === undefined
      ? DEFAULT_MAX_ATTEMPTS
      : assertMaxAttempts(input.maxAttempts, limits.maxAttemptsCeiling, `${where}maxAttempts`);
  const priority = input.priority === undefined ? DEFAULT_PRIORITY : assertPriority(input.priority, `${where}priority`);
  if (input.runAt !== undefined && input.delayMs !== undefined) {
    throw new InvalidArgumentError(`${where}runAt and ${where}delayMs cannot both be set; pick one.`, `${where}runAt`);
  }
  const runAt = input.runAt === undefined ? null : assertInstant(input.runAt, `${where}runAt`);
  const delayMs = input.delayMs === undefined ? 0 : assertDelayMs(input.delayMs, `${where}delayMs`);
  const dependsOn = parents(input, id, where);
  if (input.dependencyMode !== undefined && input.dependencyMode !== 'on_success' && input.dependencyMode !== 'on_any_terminal' && input.dependencyMode !== 'on_failure') {
    throw new InvalidArgumentError(`${where}dependencyMode must be "on_success", "on_any_terminal" or "on_failure", got ${showValue(input.dependencyMode)}.`, `${where}dependencyMode`);
  }
  if (input.dependencyMode !== undefined && dependsOn.length === 0) {
    throw new InvalidArgumentError(`${where}dependencyMode needs dependsOn.`, `${where}dependencyMode`);
  }
  // The same rule as the key of setConcurrencyLimit({ key }): a key one accepts, the other does too.
  // A group is a concurrency key by default, so it obeys the same rule; checked first, since a
  // handler whose key is its group copies an enqueue's group into the key (scheduler.client.ts).
  const group = input.group === undefined ? null : assertNonEmptyString(input.group, `${where}group`, MAX_CONCURRENCY_KEY);
  if (input.concurrencyKey !== undefined) assertNonEmptyString(input.concurrencyKey, `${where}concurrencyKey`, MAX_CONCURRENCY_KEY);
  const concurrencyKey = input.concurrencyKey ?? group;
  if (input.concurrencyLimit !== undefined) {
    if (concurrencyKey === null) throw new InvalidArgumentError(`${where}concurrencyLimit needs a concurrencyKey or a group.`, `${where}concurrencyLimit`);
    assertMaxAttempts(input.concurrencyLimit, 10_000, `${where}concurrencyLimit`);
  }
  let rateLimit: Rate | null = null;
  if (input.rateLimit !== undefined) {
    if (concurrencyKey === null) throw new InvalidArgumentError(`${where}rateLimit needs a concurrencyKey or a group.`, `${where}rateLimit`);
    rateLimit = assertRate(input.rateLimit, `${where}rateLimit`);
  }
  const uniqueKey = input.uniqueKey === undefined ? undefined : assertNonEmptyString(input.uniqueKey, `${where}uniqueKey`, MAX_UNIQUE_KEY);
  const uniqueKeyMode = input.uniqueKeyMode;
  if (uniqueKeyMode !== undefined) {
    if (uniqueKeyMode !== 'keep' && uniqueKeyMode !== 'replace') {
      throw new InvalidArgumentError(`${where}uniqueKeyMode must be "keep" or "replace", got ${showValue(uniqueKeyMode)}.`, `${where}uniqueKeyMode`);
    }
    if (uniqueKey === undefined) throw new InvalidArgumentError(`${where}uniqueKeyMode needs a uniqueKey.`, `${where}uniqueKeyMode`);
  }
  const window = normalizeWindow(input as unknown as Record<string, unknown>, where);
  const sequence = normalizeSequence(input.sequence, where);
  if (sequence !== null) {
    const clash = uniqueKey !== undefined ? 'uniqueKey' : window !== null ? window.kind : null;
    if (clash !== null) {
      throw new InvalidArgumentError(`${where}sequence cannot be combined with ${clash}: a job that joins a sequence must be written, in its place, every time it is enqueued.`, `${where}sequence`);
    }
  }
  const retry = checkRetryOverride(input.retry, `${where}retry`);
  const trace = checkTraceContext(input.traceContext, `${where}traceContext`);
  return {
    id,
    freshId: input.id === undefined,
    name,
    queue,
    payload,
    runAt,
    delayMs: window?.kind === 'debounce' ? window.windowMs : delayMs,
    maxAttempts,
    ...(priority === DEFAULT_PRIORITY ? {} : { priority }),
    dependsOn,
    dependencyMode: dependsOn.length > 0 ? (input.dependencyMode ?? 'on_success') : null,
    concurrencyKey,
    ...(group === null ? {} : { group }),
    concurrencyLimit: input.concurrencyLimit ?? null,
    rateLimit,
    ...(uniqueKey === undefined ? {} : { uniqueKey, uniqueKeyMode: uniqueKeyMode ?? 'keep' }),
    ...(window === null ? {} : { window }),
    ...(sequence === null ? {} : { sequence }),
    ...(retry === null ? {} : { retry: JSON.stringify(retry) }),
    ...(trace === null ? {} : { traceparent: trace.traceparent, tracestate: trace.tracestate ?? null }),
  };
}

function normalizeSequence(value: unknown, where: string): JobSequence | null {
  if (value === undefined) return null;
  const argument = `${where}sequence`;
  const { key, afterFailure } = checkOptions(value as SequenceOptions, ['key', 'afterFailure'], { what: 'sequence', argument, where: `${argument}.` })!;
  const checkedKey = assertNonEmptyString(key, `${argument}.key`, MAX_SEQUENCE_KEY);
  if (afterFailure !== undefined && afterFailure !== 'block' && afterFailure !== 'continue') {
    throw new InvalidArgumentError(`${argument}.afterFailure must be "block" or "continue", got ${showValue(afterFailure)}.`, `${argument}.afterFailure`);
  }
  return { key: checkedKey, afterFailure: afterFailure ?? 'block' };
}

/**
 * The input's fields, each read exactly once, as plain data: the value checked is the value
 * written, whatever a getter (or a Proxy) would return on a later read.
 */
function readOnce(input: EnqueueInput): EnqueueInput {
  const fields: Record<string, unknown> = {};
  for (const key of KNOWN_KEYS) fields[key] = (input as unknown as Record<string, unknown>)[key];
  return fields as unknown as EnqueueInput;
}

function parents(input: EnqueueInput, id: string, where: string): string[] {
  const given: unknown = input.dependsOn;
  if (given === undefined) return [];
  // Its length and each element read once (a hole reads as undefined and is refused), then checked.
  const length = Array.isArray(given) ? (given as unknown[]).length : Number.NaN;
  if (!(length <= MAX_PARENTS)) {
    throw new InvalidArgumentError(`${where}dependsOn must be an array of at most ${MAX_PARENTS} job ids.`, `${where}dependsOn`);
  }
  const list: unknown[] = [];
  for (let i = 0; i < length; i++) list.push((given as unknown[])[i]);
  const seen = new Set<string>();
  list.forEach((value, i) => {
    const parent = assertUuid(value, `${where}dependsOn[${i}]`);
    if (parent === id) throw new InvalidArgumentError(`Job ${id} cannot depend on itself.`, `${where}dependsOn`);
    if (seen.has(parent)) throw new InvalidArgumentError(`${where}dependsOn names ${parent} twice.`, `${where}dependsOn`);
    seen.add(parent);
  });
  return [...seen];
}
