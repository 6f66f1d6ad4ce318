import { DEFAULT_RETRY_POLICY, resolveRetryPolicy, type JobRecord, type RetryPolicy } from '../core/index.js';
import type { JobContext } from './job-context.js';
import { assertMaxSnoozes } from './job-snooze.js';
import type { JobDefinition, JobInvoker, PayloadValidator } from './job-invoker.js';

/** A handler as a plain function, with the same options a `@Job` class takes. */
export interface FunctionHandler<TPayload = unknown> {
  handle(payload: TPayload, context: JobContext<TPayload>): Promise<unknown> | unknown;
  readonly retry?: Partial<RetryPolicy>;
  readonly timeoutMs?: number;
  /** Default false here: plain functions have no DI scope to inject an EntityManager into. */
  readonly transaction?: boolean;
  /** Checks the payload first; `false` or a throw quarantines the job. */
  readonly validate?: PayloadValidator;
  /** How many times one job may snooze (`ctx.snooze`); the next snooze dead-letters it. Default 100. */
  readonly maxSnoozes?: number;
}

/**
 * Runs handlers given as plain functions, keyed by wire name: a worker without NestJS, for
 * scripts, tests and the simulator.
 */
export class FunctionInvoker implements JobInvoker {
  private readonly definitions = new Map<string, JobDefinition & { handle: FunctionHandler['handle'] }>();

  constructor(handlers: Record<string, FunctionHandler<never>>, defaultRetry: RetryPolicy = DEFAULT_RETRY_POLICY) {
    for (const [name, handler] of Object.entries(handlers)) {
      this.definitions.set(name, {
        handle: handler.handle as FunctionHandler['handle'],
        retry: resolveRetryPolicy(handler.retry, defaultRetry),
        timeoutMs: handler.timeoutMs,
        transaction: handler.transaction ?? false,
        validate: handler.validate,
        ...(handler.maxSnoozes === undefined ? {} : { maxSnoozes: assertMaxSnoozes(handler.maxSnoozes) }),
      });
    }
  }

  definition(name: string): JobDefinition | undefined {
    return this.definitions.get(name);
  }

  async invoke(job: JobRecord, context: JobContext): Promise<void> {
    await this.definitions.get(job.name)!.handle(job.payload, context);
  }
}
