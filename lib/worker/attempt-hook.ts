import { InvalidArgumentError, showValue, type JobRecord } from '../core/index.js';
import type { JobContext } from './job-context.js';
import type { SchedulerLogger } from './scheduler-logger.js';

/**
 * What an {@link AttemptHook} knows about the attempt it wraps. The flat fields are the ones a
 * tracer or a metrics recorder names every span or sample by; `job` is the job as this node
 * claimed it, for the rest (`runAt`, `createdAt` as the enqueue time, `scheduledFor`,
 * `scheduleId`, `concurrencyKey`, the previous attempt's `lastError`).
 */
export interface AttemptHookContext<TPayload = unknown> {
  readonly jobId: string;
  /** The wire name. */
  readonly name: string;
  readonly queue: string;
  /** This attempt's number, from 1. */
  readonly attempt: number;
  readonly maxAttempts: number;
  /** The payload, the same value the handler receives. */
  readonly payload: TPayload;
  /** The attempt's signal, the one the handler's context carries (see `JobContext.signal`). */
  readonly signal: AbortSignal;
  /** The worker that holds this attempt's lease. */
  readonly workerId: string;
  /** The job as claimed for this attempt. */
  readonly job: JobRecord<TPayload>;
  /** The attempt's logger: its lines carry the job's name, id and attempt, never the payload. */
  readonly logger: SchedulerLogger;
}

/**
 * Code wrapped around every handler invocation, like River's worker middleware. `next()` runs the
 * hooks registered after this one and then the handler, and settles as they do: it resolves when
 * the handler returns and rejects with what it threw. The promise the hook returns is the
 * attempt's result: resolving succeeds it, rejecting fails it exactly as a handler's throw would
 * (retry, or dead-letter for a `PermanentJobError`). A hook may observe the error and rethrow it,
 * or throw before calling `next()`, in which case the handler does not run. A hook that resolves
 * without calling `next()` skips the handler, and the attempt succeeds with no output.
 *
 * The first hook registered is the outermost. Hooks run inside the attempt's timeout and its
 * transaction, around resolving the handler (in Nest, in the attempt's DI scope) and calling it.
 * An attempt quarantined before its handler is called (no handler here, a payload the validator
 * refuses) runs no hook.
 */
export type AttemptHook = (context: AttemptHookContext, next: () => Promise<void>) => Promise<void>;

/** The hook context of one attempt, read from the handler's own context. */
export function attemptHookContext(job: JobRecord, context: JobContext, workerId: string): AttemptHookContext {
  return Object.freeze({
    jobId: job.id,
    name: job.name,
    queue: job.queue,
    attempt: job.attempt,
    maxAttempts: job.maxAttempts,
    payload: context.payload,
    // Read when asked: the attempt makes its AbortController only once something wants the signal.
    get signal() {
      return context.signal;
    },
    workerId,
    job,
    logger: context.logger,
  });
}

/** Refuses anything but a list of functions, with one sentence, before a node is built. */
export function checkAttemptHooks(hooks: unknown, argument = 'attemptHooks'): readonly AttemptHook[] {
  if (hooks === undefined) return [];
  if (!Array.isArray(hooks)) throw new InvalidArgumentError(`${argument} must be an array of functions (context, next) => Promise<void>, got ${showValue(hooks)}.`, argument);
  hooks.forEach((hook, i) => {
    if (typeof hook !== 'function') throw new InvalidArgumentError(`${argument}[${i}] must be a function (context, next) => Promise<void>, got ${showValue(hook)}.`, argument);
  });
  return [...(hooks as AttemptHook[])];
}

/**
 * Runs `invoke` inside `hooks`, the first outermost. Each `next` runs once: a second call rejects,
 * since one attempt runs its handler once. A hook that returns before the `next()` it called has
 * settled (it forgot to await it) gets that result instead of its own; one that throws first has
 * its error wait for it. Either way an attempt never ends, and its transaction never commits or
 * rolls back, while its handler still runs.
 */
export function runAttemptHooks(hooks: readonly AttemptHook[], context: AttemptHookContext, invoke: () => Promise<void>): Promise<void> {
  const step = async (index: number): Promise<void> => {
    if (index === hooks.length) return invoke();
    let inner: Promise<void> | undefined;
    let innerSettled = false;
    const next = () => {
      if (inner) return Promise.reject(new Error(`attempt hook ${index} called next() more than once.`));
      inner = step(index + 1);
      inner.then(
        () => (innerSettled = true),
        () => (innerSettled = true),
      );
      return inner;
    };
    let thrown: { error: unknown } | undefined;
    try {
      await hooks[index]!(context, next);
    } catch (error) {
      thrown = { error };
    }
    if (inner && !innerSettled) {
      if (!thrown) return inner;
      await inner.catch(() => undefined);
    }
    if (thrown) throw thrown.error;
  };
  return step(0);
}
