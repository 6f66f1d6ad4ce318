import { DEFAULT_RETRY_POLICY, InvalidArgumentError, resolveRetryPolicy, showValue, type JobRecord, type RetryPolicy } from '../core/index.js';
import { resolveBatchOptions, type BatchContext, type BatchHandlerOptions, type BatchJob, type ResolvedBatchOptions } from './batch-handler.js';
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
 * A handler as a plain function that takes many jobs of its name in one call (see
 * {@link BatchHandlerOptions}); each job's outcome is still its own. `transaction` is not
 * offered: each job's outcome is written on its own lease, after the call.
 */
export interface FunctionBatchHandler<TPayload = unknown> {
  readonly batch: BatchHandlerOptions;
  handleBatch(jobs: readonly BatchJob<TPayload>[], context: BatchContext): Promise<unknown> | unknown;
  readonly retry?: Partial<RetryPolicy>;
  /** Fails every job of the call that has not ended (and aborts their signals) after this long. */
  readonly timeoutMs?: number;
  readonly validate?: PayloadValidator;
  readonly maxSnoozes?: number;
}

/**
 * Runs handlers given as plain functions, keyed by wire name: a worker without NestJS, for
 * scripts, tests and the simulator.
 */
export class FunctionInvoker implements JobInvoker {
  private readonly definitions = new Map<string, JobDefinition & { handle?: FunctionHandler['handle']; handleBatch?: FunctionBatchHandler['handleBatch'] }>();
  private readonly batches = new Map<string, ResolvedBatchOptions>();

  constructor(handlers: Record<string, FunctionHandler<never> | FunctionBatchHandler<never>>, defaultRetry: RetryPolicy = DEFAULT_RETRY_POLICY) {
    for (const [name, handler] of Object.entries(handlers)) {
      const common = {
        retry: resolveRetryPolicy(handler.retry, defaultRetry),
        timeoutMs: handler.timeoutMs,
        validate: handler.validate,
        ...(handler.maxSnoozes === undefined ? {} : { maxSnoozes: assertMaxSnoozes(handler.maxSnoozes) }),
      };
      if ('batch' in handler && handler.batch !== undefined) {
        const batch = resolveBatchOptions(handler.batch, `${name}.batch`);
        if (typeof handler.handleBatch !== 'function') throw new InvalidArgumentError(`the handler of ${showValue(name)} sets batch, so it needs a handleBatch(jobs, context) function.`, `${name}.handleBatch`);
        if ((handler as { transaction?: unknown }).transaction === true) throw new InvalidArgumentError(BATCH_TRANSACTION(name), `${name}.transaction`);
        this.batches.set(name, batch);
        this.definitions.set(name, { ...common, handleBatch: handler.handleBatch as FunctionBatchHandler['handleBatch'], transaction: false, batch });
      } else {
        const one = handler as FunctionHandler<never>;
        this.definitions.set(name, { ...common, handle: one.handle as FunctionHandler['handle'], transaction: one.transaction ?? false });
      }
    }
  }

  definition(name: string): JobDefinition | undefined {
    return this.definitions.get(name);
  }

  async invoke(job: JobRecord, context: JobContext): Promise<void> {
    await this.definitions.get(job.name)!.handle!(job.payload, context);
  }

  async invokeBatch(jobs: readonly BatchJob[], context: BatchContext): Promise<void> {
    await this.definitions.get(context.name)!.handleBatch!(jobs, context);
  }

  batchHandlers(): ReadonlyMap<string, ResolvedBatchOptions> {
    return this.batches;
  }
}

/** Why a batch handler cannot take `transaction: true`. */
export function BATCH_TRANSACTION(name: string): string {
  return `the batch handler of ${showValue(name)} cannot set transaction: true: each job's outcome is written on its own lease after the call, so no one transaction can hold them; write through your own transaction and make the handler idempotent.`;
}
