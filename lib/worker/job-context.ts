import type { EntityManager } from 'typeorm';
import { encodeJson, ProgressRefusedError, type JobBatchInfo, type JobRecord } from '../core/index.js';
import type { AttemptTransaction, JobStore } from '../store/index.js';
import { snoozeOf, type JobSnooze } from './job-snooze.js';
import type { ProgressBoard } from './progress-board.js';
import { jobLogFields, type SchedulerLogger } from './scheduler-logger.js';

/** What a handler knows about the attempt it runs. Injectable per attempt in the Nest module. */
export interface JobContext<TPayload = unknown> {
  readonly jobId: string;
  /** The wire name. */
  readonly name: string;
  readonly queue: string;
  readonly payload: TPayload;
  /** The dedupe key for this occurrence: identical on every attempt and every redelivery. */
  readonly occurrenceId: string;
  /** This attempt's number, from 1. */
  readonly attempt: number;
  readonly maxAttempts: number;
  /** Times this job snoozed before this attempt (see {@link snooze}). */
  readonly snoozes: number;
  /** The instant the job was meant to run. */
  readonly scheduledFor: Date;
  /**
   * The batch this job is part of, or is a callback of (`callback` says which); null for a job
   * outside any batch. A callback reads its batch's counts with `client.getBatch(ctx.batch.id)`.
   */
  readonly batch: JobBatchInfo | null;
  /**
   * Aborted when the attempt should stop: its lease was lost or lapsed, an operator cancelled the
   * job, the job's timeout passed, or the node is shutting down. `signal.reason` says which.
   */
  readonly signal: AbortSignal;
  /** A logger whose lines carry the job's name, id and attempt. */
  readonly logger: SchedulerLogger;
  /**
   * Stores a JSON value with the success outcome, as it is at this call (later changes to the object
   * are not seen). Refused (PayloadTooLargeError) when it is over the output limit; never truncated.
   * Discarded if the attempt does not succeed.
   */
  setOutput(value: unknown): void;
  /**
   * Reports how far the attempt has come: a small JSON value (at most `maxProgressBytes`, 4 KiB by
   * default), as it is at this call, that operators read on the job (`client.get`, the CLI's
   * `jobs show`, the dashboard). Reports coalesce: the latest value is written with the attempt's
   * next heartbeat, at most one write per heartbeat interval, and the last one when the attempt
   * ends. The write is fenced on this attempt's lease. Bad input (not JSON, too large, too deep)
   * throws at once, before anything is written.
   *
   * The promise resolves as soon as the value is queued, without waiting for the heartbeat, so
   * awaiting it in a loop costs nothing. It rejects at once with ProgressRefusedError when this
   * node already knows the lease is gone (the store refused an earlier report, or `signal` was
   * aborted with `lease_lost` or `lease_expired`), or the attempt has ended; an awaited report
   * thus stops a stale handler. Use {@link progressWritten} to wait for the write itself.
   */
  reportProgress(value: unknown): Promise<void>;
  /**
   * Resolves once the last value this attempt reported (or a later one) is written, which takes
   * until the next heartbeat (`heartbeatIntervalMs`), or the end of the attempt; at once when no
   * reported value is waiting. Rejects with ProgressRefusedError when the store refused the write
   * because this worker no longer holds the lease. Few handlers need it: progress is written
   * without anyone waiting for it.
   */
  progressWritten(): Promise<void>;
  /**
   * The output an ancestor stored when it succeeded: a job this one depends on, directly or through
   * other dependants. Undefined when the ancestor stored none, was deleted by retention, or is not
   * an ancestor of this job.
   */
  parentOutput<T = unknown>(ancestorId: string): Promise<T | undefined>;
  /**
   * Ends this attempt without an error and runs the job again after `delayMs` milliseconds:
   * `return ctx.snooze(60_000)`. The snooze does not spend the retry budget (the job's
   * `maxAttempts` grows by one; `attempt` keeps counting every run), and the attempt's transaction,
   * if it opened one, is rolled back. A handler that throws after calling it fails as usual. After
   * `maxSnoozes` snoozes (`@Job` option, default 100) the next one dead-letters the job. A bad delay
   * throws InvalidArgumentError. See docs/snooze.md.
   */
  snooze(delayMs: number): JobSnooze;
}

/** The context of one attempt, plus what the worker needs to finish it. */
export class AttemptContext<TPayload = unknown> implements JobContext<TPayload> {
  readonly jobId: string;
  readonly name: string;
  readonly queue: string;
  readonly payload: TPayload;
  readonly attempt: number;
  readonly maxAttempts: number;
  readonly snoozes: number;
  readonly scheduledFor: Date;
  readonly logger: SchedulerLogger;
  private encodedOutput: { value: unknown } | undefined;
  /** Set when the attempt ended: a report after that has no lease left to ride on. */
  private ended = false;
  /** The handler's last `snooze` call, if it made one. */
  private snoozeRequest: JobSnooze | undefined;

  constructor(
    private readonly job: JobRecord,
    private readonly abort: { readonly signal: AbortSignal; readonly reason?: unknown },
    logger: SchedulerLogger,
    private readonly store: Pick<JobStore, 'limits' | 'jobParentOutput'>,
    /** The attempt's transaction, when the job uses one and the store offers it. */
    readonly transaction: AttemptTransaction | null,
    /** Where reported progress waits for its heartbeat; without one, reports are checked and dropped. */
    private readonly progress?: ProgressBoard,
  ) {
    this.jobId = job.id;
    this.name = job.name;
    this.queue = job.queue;
    this.payload = job.payload as TPayload;
    this.attempt = job.attempt;
    this.maxAttempts = job.maxAttempts;
    this.snoozes = job.snoozes;
    this.scheduledFor = job.scheduledFor;
    const prefix = `${job.name} ${job.id} attempt ${job.attempt}: `;
    // The fields are built per line: most attempts log nothing.
    this.logger = {
      log: (message) => logger.log(prefix + message, jobLogFields(job)),
      warn: (message) => logger.warn(prefix + message, jobLogFields(job)),
      error: (message) => logger.error(prefix + message, jobLogFields(job)),
      debug: (message) => logger.debug?.(prefix + message, jobLogFields(job)),
    };
  }

  get batch(): JobBatchInfo | null {
    return this.job.batch;
  }

  /** Read from the job when asked: it is derived (a hash) on first read. */
  get occurrenceId(): string {
    return this.job.occurrenceId;
  }

  get signal(): AbortSignal {
    return this.abort.signal;
  }

  setOutput(value: unknown): void {
    const { limits } = this.store;
    // Kept as the plain value that was checked: a getter or a later change to the handler's object
    // cannot put something else into the success write.
    const text = encodeJson(value, { argument: 'output', maxBytes: limits.maxOutputBytes, maxDepth: limits.maxJsonDepth });
    this.encodedOutput = { value: JSON.parse(text) as unknown };
  }

  reportProgress(value: unknown): Promise<void> {
    const { limits } = this.store;
    // Checked and copied now, as setOutput does: the heartbeat that writes it may come seconds later.
    const text = encodeJson(value, { argument: 'progress', maxBytes: limits.maxProgressBytes, maxDepth: limits.maxJsonDepth });
    // No heartbeat carries a lease the node knows is gone: the value could only ever be refused.
    if (this.ended || this.leaseGone()) return refusedNow(this.jobId, this.attempt);
    return this.progress?.report(this.jobId, this.attempt, JSON.parse(text) as unknown) ?? Promise.resolve();
  }

  progressWritten(): Promise<void> {
    return this.progress?.written(this.jobId, this.attempt) ?? Promise.resolve();
  }

  private leaseGone(): boolean {
    const reason = this.abort.reason;
    return reason === 'lease_lost' || reason === 'lease_expired';
  }

  snooze(delayMs: number): JobSnooze {
    this.snoozeRequest = snoozeOf(delayMs);
    return this.snoozeRequest;
  }

  /** The snooze the handler asked for, if it did. */
  get snoozed(): JobSnooze | undefined {
    return this.snoozeRequest;
  }

  /** Marks the attempt over: later reports are refused at once. */
  end(): void {
    this.ended = true;
  }

  async parentOutput<T = unknown>(ancestorId: string): Promise<T | undefined> {
    const { found, output } = await this.store.jobParentOutput({ jobId: this.jobId, ancestorId });
    return found ? (output as T) : undefined;
  }

  /** The output set by the handler, or undefined. */
  get output(): unknown {
    return this.encodedOutput?.value;
  }

  /** The attempt's EntityManager; throws when this job has no attempt transaction. */
  entityManager(): EntityManager {
    if (!this.transaction) {
      throw new Error(
        `Job ${this.name} has no attempt transaction: it opted out with transaction: false, or the store has no attemptTransactions capability.`,
      );
    }
    return this.transaction.manager;
  }
}

/** A refusal the caller may or may not await: handled, so it never becomes an unhandled rejection. */
function refusedNow(jobId: string, attempt: number): Promise<void> {
  const refused = Promise.reject(new ProgressRefusedError(jobId, attempt));
  refused.catch(() => undefined);
  return refused;
}
