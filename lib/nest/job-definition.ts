import {
  assertMaxAttempts,
  assertPriority,
  assertPositiveInteger,
  assertQueueName,
  assertRate,
  assertWireName,
  DEFAULT_LIMITS,
  DEFAULT_RETRY_POLICY,
  InvalidArgumentError,
  resolveRetryPolicy,
  showKey,
  showValue,
  type RetryPolicy,
} from '../core/index.js';
import type { Rate } from '../store/index.js';
import { checkJobSequence, type JobSequenceOption } from './job-sequence.js';

/** Carries the payload type of a definition; it exists only for the compiler. */
declare const payloadType: unique symbol;
/**
 * Marks objects made by {@link defineJob}. A registered symbol, so a definition still counts when
 * two copies of the package are loaded. Not enumerable, so `{ ...definition }` is a plain object.
 */
const DEFINED_JOB = Symbol.for('nestjs-durable-scheduler.defined-job');

/** What producers and workers share about a job: everything an enqueue needs. */
export interface DefineJobOptions<TPayload> {
  /** The wire name: stable across deployments, never derived from a class name. */
  readonly name: string;
  /** The queue its jobs go to. Default `default`. */
  readonly queue?: string;
  /** Attempts before dead-lettering. Default: the module's `maxAttempts` (10). */
  readonly maxAttempts?: number;
  /**
   * Claims take due jobs with a lower priority first: a whole number from -10 (first) to 10
   * (last). Default 0. An enqueue's `priority` overrides it.
   */
  readonly priority?: number;
  /** The retry policy of its handler, over the worker module's `retry`. Applied where the job runs. */
  readonly retry?: Partial<RetryPolicy>;
  /** The fair group of each job, computed from its payload at enqueue; also its concurrency key unless that is set (docs/groups.md). */
  readonly group?: (payload: TPayload) => string;
  /** The concurrency key of each job, computed from its payload at enqueue (a tenant, an account). */
  readonly concurrencyKey?: (payload: TPayload) => string;
  /**
   * At most this many jobs with the same concurrency key run at once, cluster-wide. Without
   * `concurrencyKey`, the key is the wire name: a cap on this job.
   */
  readonly concurrencyLimit?: number;
  /**
   * At most `max` jobs with the same concurrency key start in any window of `perMs` milliseconds,
   * cluster-wide. Without `concurrencyKey`, the key is the wire name: a rate for this job.
   */
  readonly rateLimit?: Rate;
  /** The sequence each job joins, its key computed from its payload at enqueue (docs/sequences.md). */
  readonly sequence?: JobSequenceOption<TPayload>;
}

/**
 * A job's shared definition, made by {@link defineJob}: its wire name, payload type and enqueue
 * defaults. Producers enqueue with it (`client.enqueue(Definition, payload)`), with no handler
 * class registered; workers handle it with `@Job(Definition)`.
 */
export interface DefinedJob<TPayload = unknown> extends DefineJobOptions<TPayload> {
  // Only made by defineJob: a plain options object is not a definition. The payload type sits
  // both in and out, so a definition of one payload type is never accepted for another.
  readonly [payloadType]: (payload: TPayload) => TPayload;
}

/** The payload type of a definition: `PayloadOf<typeof ConfirmOrder>`. */
export type PayloadOf<D> = D extends DefinedJob<infer P> ? P : never;

/** One job of an `enqueueMany` call, named by its definition. */
export type DefinedJobSpec<TPayload> = { readonly job: DefinedJob<TPayload>; readonly payload: TPayload };

/** The keys of {@link DefineJobOptions}, which `@Job(definition, options)` may not set again. */
export const DEFINITION_KEYS: readonly string[] = ['name', 'queue', 'maxAttempts', 'priority', 'retry', 'group', 'concurrencyKey', 'concurrencyLimit', 'rateLimit', 'sequence'];
/** `@Job` options that only a handler has; named in the refusal of defineJob, which does not take them. */
const HANDLER_KEYS = new Set(['timeoutMs', 'transaction', 'schedule', 'validate', 'maxSnoozes', 'batch']);

/**
 * Defines a job once, for producers and workers alike:
 *
 * ```ts
 * export const ConfirmOrder = defineJob<{ orderId: string }>({ name: 'orders.confirm', queue: 'orders', maxAttempts: 5 });
 * await client.enqueue(ConfirmOrder, { orderId });          // a producer: no handler needed
 * @Job(ConfirmOrder) class ConfirmOrderJob { ... }          // a worker
 * ```
 *
 * Checks the options now, and refuses a bad one with an InvalidArgumentError. Limits that depend
 * on the store (name length, the attempts ceiling) are checked where the job is enqueued.
 */
export function defineJob<TPayload>(options: DefineJobOptions<TPayload>): DefinedJob<TPayload> {
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new InvalidArgumentError(`defineJob needs an object with at least a name, got ${showValue(options)}.`, 'options');
  }
  const length = typeof options.name === 'string' ? options.name.length : 0;
  const name = assertWireName(options.name, Math.max(DEFAULT_LIMITS.maxNameLength, length), 'defineJob name');
  const refuse = (message: string, argument: string): never => {
    throw new InvalidArgumentError(`defineJob('${name}') ${message}`, argument);
  };
  for (const key of Object.keys(options)) {
    if (HANDLER_KEYS.has(key)) refuse(`sets ${key}, which belongs to the handler; pass it as @Job(definition, { ${key} }).`, key);
    if (!DEFINITION_KEYS.includes(key)) refuse(`sets ${showKey(key)}, which is not a job definition option; known options are ${DEFINITION_KEYS.join(', ')}.`, key);
  }
  const owned = <T>(check: () => T): T => {
    try {
      return check();
    } catch (error) {
      if (error instanceof InvalidArgumentError) refuse(error.message, error.argument ?? 'options');
      throw error;
    }
  };
  const { queue, maxAttempts, priority, retry, group, concurrencyKey, concurrencyLimit, rateLimit } = options;
  const sequence = owned(() => checkJobSequence(options.sequence));
  if (queue !== undefined) owned(() => assertQueueName(queue, 'queue'));
  const ceiling = Math.max(DEFAULT_LIMITS.maxAttemptsCeiling, Number.isSafeInteger(maxAttempts) ? (maxAttempts as number) : 0);
  if (maxAttempts !== undefined) owned(() => assertMaxAttempts(maxAttempts, ceiling, 'maxAttempts'));
  if (priority !== undefined) owned(() => assertPriority(priority, 'priority'));
  if (retry !== undefined) owned(() => resolveRetryPolicy(retry, DEFAULT_RETRY_POLICY));
  if (group !== undefined && typeof group !== 'function') refuse('sets group to something other than a function of the payload.', 'group');
  if (concurrencyKey !== undefined && typeof concurrencyKey !== 'function') refuse('sets concurrencyKey to something other than a function of the payload.', 'concurrencyKey');
  if (concurrencyLimit !== undefined) owned(() => assertPositiveInteger(concurrencyLimit, 'concurrencyLimit', 10_000));
  if (rateLimit !== undefined) owned(() => assertRate(rateLimit, 'rateLimit'));

  // Only the keys given, so spreading a definition into @Job options adds no undefined values.
  const fields = Object.fromEntries(
    Object.entries({ name, queue, maxAttempts, priority, retry: retry && Object.freeze({ ...retry }), group, concurrencyKey, concurrencyLimit, rateLimit: rateLimit && Object.freeze({ max: rateLimit.max, perMs: rateLimit.perMs }), sequence }).filter(([, v]) => v !== undefined),
  );
  Object.defineProperty(fields, DEFINED_JOB, { value: true });
  return Object.freeze(fields) as unknown as DefinedJob<TPayload>;
}

/** True for a definition made by {@link defineJob}. */
export function isDefinedJob(value: unknown): value is DefinedJob {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[DEFINED_JOB] === true;
}
