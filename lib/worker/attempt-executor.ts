import { effectiveRetryPolicy, retryDelayMs, type JobRecord, type RandomSource } from '../core/index.js';
import type { AttemptTransaction, HeartbeatLease, HeartbeatResult, JobStore, Outcome, OutcomeResult } from '../store/index.js';
import type { AttemptAbort } from './attempt-abort.js';
import { attemptHookContext, runAttemptHooks, type AttemptHook } from './attempt-hook.js';
import { AttemptContext } from './job-context.js';
import type { JobDefinition, JobInvoker, PayloadValidator } from './job-invoker.js';
import { DEFAULT_MAX_SNOOZES, snoozeLimitError, type JobSnooze } from './job-snooze.js';
import { describeError, errorDetail, errorText, isInstance, type ErrorLogDetail } from './log-text.js';
import { PermanentJobError } from './permanent-job.error.js';
import type { ProgressBoard } from './progress-board.js';
import { jobLogFields, type SchedulerLogger } from './scheduler-logger.js';
import { withTimeout, type Timers } from './timers.js';

/** What an attempt produced: an outcome for the completer, or one already written in its transaction. */
export type AttemptReport =
  | {
      readonly kind: 'report';
      readonly outcome: Outcome;
      /** The class of what the handler (or its timeout) threw, for spans and metrics; absent on success and quarantine. */
      readonly errorType?: string;
    }
  | { readonly kind: 'recorded'; readonly outcome: Outcome; readonly result: OutcomeResult };

export interface AttemptExecutorDeps {
  readonly store: JobStore;
  readonly invoker: JobInvoker;
  readonly workerId: string;
  readonly random: RandomSource;
  readonly logger: SchedulerLogger;
  readonly timers: Timers;
  /** How much of a handler's error its log line carries. Default `message`. */
  readonly errorLogDetail?: ErrorLogDetail;
  /** Wrapped around each handler invocation, the first outermost (see {@link AttemptHook}). */
  readonly hooks?: readonly AttemptHook[];
  /** Where `ctx.reportProgress` values wait for a heartbeat, and how the last one is written when the handler ends. */
  readonly progress?: { readonly board: ProgressBoard; send(lease: HeartbeatLease): Promise<HeartbeatResult> };
}

/** The reason a signal was aborted for a job timeout. */
export class JobTimeoutError extends Error {
  constructor(readonly timeoutMs: number) {
    super(`timed out after ${timeoutMs} ms`);
    this.name = 'JobTimeoutError';
  }
}

/**
 * Runs one attempt: builds its context, opens its transaction if the job uses one, calls the
 * handler under its timeout, and turns the result into an outcome. A success with an opened
 * transaction is written inside it (fenced) and committed together with the handler's writes; a
 * failure rolls the handler's writes back before the failure is reported.
 */
export class AttemptExecutor {
  constructor(private readonly deps: AttemptExecutorDeps) {}

  async execute(job: JobRecord, abort: AttemptAbort): Promise<AttemptReport> {
    const { store, invoker, logger } = this.deps;
    const definition = invoker.definition(job.name);
    if (!definition) {
      logger.error(`QUARANTINED ${job.name} ${job.id}: no handler for "${job.name}" is registered on this node; replay it once one is.`, jobLogFields(job));
      return report({ jobId: job.id, attempt: job.attempt, kind: 'quarantined', reason: `no handler for "${job.name}" on this node` });
    }
    const rejected = this.rejected(job, definition);
    if (rejected) return rejected;
    const transaction: AttemptTransaction | null =
      definition.transaction && store.capabilities.attemptTransactions ? store.beginAttempt() : null;
    const context = new AttemptContext(job, abort, logger, store, transaction, this.deps.progress?.board);

    try {
      const hooks = this.deps.hooks ?? [];
      const invoke = () => invoker.invoke(job, context);
      const run = hooks.length === 0 ? invoke : () => runAttemptHooks(hooks, attemptHookContext(job, context, this.deps.workerId), invoke);
      await this.withTimeout(transaction ? transaction.run(run) : run(), definition.timeoutMs, abort);
    } catch (error) {
      return this.failure(job, context, definition, abort, error, transaction);
    }
    return this.success(job, context, definition, transaction);
  }

  /**
   * The report of an attempt whose handler threw (or whose hooks did, or which timed out): its
   * writes roll back, its last progress lands, and it is retried, dead-lettered or, when an
   * operator cancelled it, ended cancelled. Used for one job of a batch handler's call as well.
   */
  async failure(job: JobRecord, context: AttemptContext, definition: JobDefinition, abort: AttemptAbort, error: unknown, transaction: AttemptTransaction | null = null): Promise<AttemptReport> {
    const { logger } = this.deps;
    await this.rollbackLogged(job, transaction);
    const ending = this.endProgress(job, context);
    if (ending) await ending;
    // The log line is bounded and escaped (a handler's error may quote the payload or carry
    // escapes); lastError keeps the whole text for the operator.
    const message = describeError(error, this.deps.errorLogDetail);
    if (isInstance(error, PermanentJobError)) {
      logger.warn(`${job.name} ${job.id} attempt ${job.attempt} failed permanently: ${message}`, jobLogFields(job));
      return report({ jobId: job.id, attempt: job.attempt, kind: 'dead_lettered', error: errorDetail(error) }, describeError(error, 'class'));
    }
    // The job's own retry fields, set at enqueue on whichever node produced it, win over the
    // handler's. Snoozed runs are not failures: the backoff counts the failed attempts only.
    const delay = retryDelayMs(Math.max(1, job.attempt - job.snoozes), effectiveRetryPolicy(definition.retry, job.retry), this.deps.random);
    // A cancel request wins over the failure it caused: the outcome write ends the job cancelled, never retried.
    if (abort.reason === 'cancel_requested') {
      logger.log(`${job.name} ${job.id} attempt ${job.attempt} stopped: an operator cancelled the job, which ends cancelled.`, jobLogFields(job));
    } else {
      logger.warn(
        job.attempt < job.maxAttempts
          ? `${job.name} ${job.id} attempt ${job.attempt} of ${job.maxAttempts} failed (${message}); retrying in ${delay} ms.`
          : `${job.name} ${job.id} attempt ${job.attempt} of ${job.maxAttempts} failed (${message}); no attempts left.`,
        jobLogFields(job),
      );
    }
    return report({ jobId: job.id, attempt: job.attempt, kind: 'failed', error: errorDetail(error), retryDelayMs: delay }, describeError(error, 'class'));
  }

  /** The report of an attempt whose handler returned: a snooze, or a success with its output. */
  async success(job: JobRecord, context: AttemptContext, definition: JobDefinition, transaction: AttemptTransaction | null = null): Promise<AttemptReport> {
    const snooze = context.snoozed;
    if (snooze) return this.snoozed(job, context, snooze, transaction, definition.maxSnoozes ?? DEFAULT_MAX_SNOOZES);
    // The last progress lands before the outcome, while the lease is still live; a job that never
    // reported skips this without a statement.
    const ending = this.endProgress(job, context);
    if (ending) await ending;
    const outcome: Outcome = { jobId: job.id, attempt: job.attempt, kind: 'succeeded', output: context.output };
    if (transaction?.opened) {
      const result = await transaction.commitSuccess(this.deps.workerId, job.id, job.attempt, context.output);
      return { kind: 'recorded', outcome, result };
    }
    await transaction?.rollback();
    return report(outcome);
  }

  /**
   * A handler that snoozed: its writes roll back first, as a failure's do (on SQLite a progress
   * write sent inside the open transaction would go with them), then the last progress lands, then
   * the snooze is reported, or a dead letter once the job has used its snoozes.
   */
  private async snoozed(job: JobRecord, context: AttemptContext, snooze: JobSnooze, transaction: AttemptTransaction | null, maxSnoozes: number): Promise<AttemptReport> {
    const { logger } = this.deps;
    await this.rollbackLogged(job, transaction);
    const ending = this.endProgress(job, context);
    if (ending) await ending;
    if (job.snoozes >= maxSnoozes) {
      logger.warn(`${job.name} ${job.id} attempt ${job.attempt} snoozed once more than maxSnoozes (${maxSnoozes}) allows; dead-lettering it.`, jobLogFields(job));
      return report({ jobId: job.id, attempt: job.attempt, kind: 'dead_lettered', error: snoozeLimitError(job.snoozes, maxSnoozes) });
    }
    return report({ jobId: job.id, attempt: job.attempt, kind: 'snoozed', delayMs: snooze.delayMs });
  }

  /** A quarantine report when the definition's validator refuses the job's payload, else undefined. */
  rejected(job: JobRecord, definition: JobDefinition): AttemptReport | undefined {
    const rejected = definition.validate ? validationFailure(definition.validate, job.payload) : null;
    if (rejected === null) return undefined;
    // The reason goes to the job's lastError, not the log: a validator's message may quote the payload.
    this.deps.logger.error(`QUARANTINED ${job.name} ${job.id}: its payload failed the job's validation; the reason is the job's last error. Fix the payload's producer or the validator, then replay it.`, jobLogFields(job));
    return report({ jobId: job.id, attempt: job.attempt, kind: 'quarantined', reason: `payload failed validation: ${rejected}` });
  }

  /** Rolls the attempt's writes back; a rollback that fails is logged, and the outcome is still reported. */
  private async rollbackLogged(job: JobRecord, transaction: AttemptTransaction | null): Promise<void> {
    await transaction?.rollback().catch((rollbackError: unknown) => this.deps.logger.warn(`rollback of ${job.name} ${job.id} failed: ${describe(rollbackError)}`, jobLogFields(job)));
  }

  /** Undefined, with nothing to await, for an attempt that never reported progress. */
  private endProgress(job: JobRecord, context: AttemptContext): Promise<void> | undefined {
    context.end();
    const progress = this.deps.progress;
    return progress?.board.close(job.id, job.attempt, (lease) => progress.send(lease));
  }

  private withTimeout(work: Promise<void>, timeoutMs: number | undefined, abort: AttemptAbort): Promise<void> {
    if (timeoutMs === undefined) return work;
    return withTimeout(work, timeoutMs, this.deps.timers, () => {
      const error = new JobTimeoutError(timeoutMs);
      abort.abort(error);
      return error;
    });
  }
}

/** Null when the validator accepts the payload, else why it did not. */
function validationFailure(validate: PayloadValidator, payload: unknown): string | null {
  try {
    return validate(payload) === false ? 'the validator returned false' : null;
  } catch (error) {
    return errorText(error);
  }
}

function report(outcome: Outcome, errorType?: string): AttemptReport {
  return errorType === undefined ? { kind: 'report', outcome } : { kind: 'report', outcome, errorType };
}

/** One line for logs: the error's class and a bounded, escaped message (see {@link describeError}). */
export function describe(error: unknown): string {
  return describeError(error);
}

