import { Inject, Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { checkOptions, InvalidArgumentError, showValue, type DependencyMode, type JobRecord, type RetryPolicy, type TraceContext } from '../core/index.js';
import type {
  CancelResult,
  ConcurrencyLimit,
  EnqueueInput,
  DebounceOptions,
  EnqueueResult,
  HistoryEntry,
  JobPage,
  JobStore,
  LimitTarget,
  ListJobsParams,
  Rate,
  RateLimit,
  RateLimitStatus,
  ScheduleListParams,
  Schedule,
  ScheduleInput,
  SequenceOptions,
  ThrottleOptions,
  BlockedSequence,
  ListBlockedSequencesParams,
  ListGroupsParams,
  WaitingGroup,
  BatchCancelResult,
  BatchSummary,
  EnqueueBatchResult,
  ListBatchesParams,
  UniqueKeyMode,
} from '../store/index.js';
import { DEFAULT_QUEUE } from '../store/index.js';
import { describeError, isInstance, waitForBatch, type JobWaitResult, type WaitForOptions } from '../worker/index.js';
import type { JobName, JobPayload } from './interfaces/job-registry.interface.js';
import { definitionDefaults } from './defined-jobs.js';
import { isDefinedJob, type DefinedJob, type DefinedJobSpec } from './job-definition.js';
import { JobHandlerRegistry, type JobDefaults } from './job-handler.registry.js';
import { SchedulerOrchestrator } from './scheduler.orchestrator.js';
import { UNKNOWN_JOB_NAME } from './scheduler.messages.js';
import { SCHEDULER_STORE } from './scheduler.tokens.js';
import { declaredSequence } from './job-sequence.js';

/** Options of one enqueue. */
export interface EnqueueJobOptions {
  /** A caller-chosen UUID; enqueueing an id that exists writes nothing and returns `created: false`. */
  readonly id?: string;
  /** Run at (or after) this instant. Exclusive with `delayMs`. */
  readonly runAt?: Date;
  /** Run this many milliseconds after the database's current time. Exclusive with `runAt`. */
  readonly delayMs?: number;
  /** Overrides the queue from the job's `@Job` options. */
  readonly queue?: string;
  /** Overrides `maxAttempts` from the job's `@Job` options. */
  readonly maxAttempts?: number;
  /** Overrides `priority` from the job's `@Job` options: -10 (first) to 10 (last). */
  readonly priority?: number;
  /**
   * Jobs that must finish first. The job waits in `awaiting_parents` until each has finished; the
   * ids must exist already (or be earlier in the same `enqueueMany`).
   */
  readonly dependsOn?: readonly string[];
  /**
   * `on_success` (default): run once every parent succeeded; a parent that is dead-lettered,
   * cancelled or quarantined cancels this job (and its own dependants). `on_any_terminal`: run
   * once every parent finished, however it ended.
   */
  readonly dependencyMode?: DependencyMode;
  /**
   * The job's fair group (a tenant id), over the one its `@Job` options compute: claims take turns
   * across the groups with due work. Also its concurrency key unless one is set (docs/groups.md).
   */
  readonly group?: string;
  /** Overrides the concurrency key the job's `@Job` options compute. */
  readonly concurrencyKey?: string;
  /** Declares the key's limit if it has none yet; a key's first declaration stands. */
  readonly concurrencyLimit?: number;
  /**
   * Declares the key's rate limit (`{ max, perMs }`) if it has none yet; a key's first declaration
   * stands. Overrides the rate from the job's `@Job` options; it needs a concurrency key.
   */
  readonly rateLimit?: Rate;
  /**
   * At most one unfinished job of this name holds the key: while one does, this enqueue writes no
   * job and returns the holder's id, with `created: false` and `deduplicated` saying what it did.
   */
  readonly uniqueKey?: string;
  /**
   * `keep` (default): leave the holder as it is. `replace`: give the holder this payload and run
   * time if it has not started yet (for a trailing debounce, see `debounce`).
   */
  readonly uniqueKeyMode?: UniqueKeyMode;
  /**
   * Trailing debounce (`{ key, windowMs, maxDelayMs? }`): while a job of this name with the key has
   * not started, this enqueue gives it this payload and pushes its run time to `windowMs` from
   * now, never past `maxDelayMs` (default ten windows) after the key's first enqueue. The result
   * says `deduplicated: 'debounced'`. Not with `runAt`, `delayMs`, `uniqueKey` or `dependsOn`.
   */
  readonly debounce?: DebounceOptions;
  /**
   * Leading throttle (`{ key, windowMs }`): the first enqueue of this name with the key opens a
   * window of `windowMs`; until it ends, enqueues with the key write nothing and return the
   * opener's id with `deduplicated: 'throttled'`. Not with `uniqueKey` or `dependsOn`.
   */
  readonly throttle?: ThrottleOptions;
  /**
   * Strict order (`{ key, afterFailure? }`): jobs with the same sequence key run one at a time, in
   * the order their enqueues committed, across names and queues. Overrides the sequence the job's
   * `@Job` options compute. Not with `uniqueKey`, `debounce` or `throttle`. See docs/sequences.md.
   */
  readonly sequence?: SequenceOptions;
  /** Retry fields for this job, over the `@Job` (and module) retry policy; each one optional. */
  readonly retry?: Partial<RetryPolicy>;
  /**
   * The W3C trace context the job's attempts continue. Filled in from the active span when
   * OpenTelemetry is on; set it to continue a trace the active span does not carry.
   */
  readonly traceContext?: TraceContext;
  /**
   * An EntityManager inside an open transaction (from `dataSource.transaction(...)`). The job is
   * written in that transaction and exists only if it commits.
   */
  readonly manager?: EntityManager;
}

/** A recurring schedule for `client.schedule`; the payload type follows the name. */
export type ScheduleSpec<N extends JobName = JobName> = Omit<ScheduleInput, 'name' | 'payload'> & { readonly name: N; readonly payload?: JobPayload<N> };

/** A recurring schedule for `client.schedule`, whose jobs follow a `defineJob` definition. */
export type DefinedScheduleSpec<P> = Omit<ScheduleInput, 'name' | 'payload'> & { readonly job: DefinedJob<P>; readonly payload?: P };

/** One job of an `enqueueMany` call; the payload type follows the name. */
export type JobSpec = {
  [N in JobName]: { readonly name: N; readonly payload: JobPayload<N> } & Omit<EnqueueJobOptions, 'manager'>;
}[JobName];

/** A batch callback: a job named by `name` or by a definition (whose payload type `P` follows), as in `enqueueMany`. */
export type BatchCallbackSpec<P = unknown> = JobSpec | (DefinedJobSpec<P> & Omit<EnqueueJobOptions, 'manager'>);

/** The callbacks of `enqueueBatch`; at least one. Each type parameter is a callback definition's payload type. */
export interface BatchCallbacks<S = unknown, C = unknown, F = unknown> {
  /** Runs once every job of the batch succeeded; cancelled as soon as one fails for good or is cancelled. */
  readonly onSuccess?: BatchCallbackSpec<S>;
  /** Runs once every job of the batch ended, however each ended. */
  readonly onComplete?: BatchCallbackSpec<C>;
  /** Runs once every job of the batch ended and at least one did not succeed; cancelled when all succeeded. */
  readonly onFailure?: BatchCallbackSpec<F>;
}

/**
 * Enqueues jobs and performs operator actions. Inject it anywhere once SchedulerModule is imported
 * (or registered with `isGlobal`).
 */
@Injectable()
export class SchedulerClient {
  constructor(
    @Inject(SCHEDULER_STORE) private readonly store: JobStore,
    private readonly registry: JobHandlerRegistry,
    private readonly orchestrator: SchedulerOrchestrator,
  ) {}

  /**
   * Writes one job, named by a `defineJob` definition (whose defaults apply; no handler needs to
   * be registered here) or by a wire name this node has a handler or a listed definition for.
   * With `manager`, the job commits or rolls back with that transaction. Bad input is refused
   * before anything is written.
   */
  async enqueue<P>(job: DefinedJob<P>, payload: P, options?: EnqueueJobOptions): Promise<EnqueueResult>;
  async enqueue<N extends JobName>(name: N, payload: JobPayload<N>, options?: EnqueueJobOptions): Promise<EnqueueResult>;
  async enqueue(job: string | DefinedJob, payload: unknown, options: EnqueueJobOptions = {}): Promise<EnqueueResult> {
    const { manager, ...rest } = readOnce(optionsObject(options, 'options'), ['manager']);
    const named = isDefinedJob(job) ? { job } : { name: job };
    const input = this.input({ ...named, payload, ...rest }, undefined);
    const write = (trace: TraceContext | undefined) =>
      this.store.jobEnqueue({ job: trace && !input.traceContext ? { ...input, traceContext: trace } : input, ...(manager ? { manager } : undefined) });
    const { telemetry } = this.orchestrator;
    if (!telemetry) return write(undefined);
    return telemetry.send({ queues: new Map([[input.queue ?? DEFAULT_QUEUE, 1]]), name: input.name }, write, (result) => result.id);
  }

  /**
   * Writes many jobs in one statement: all of them, or none when any is refused. Each names its
   * job by `name` or by a definition (`{ job: ConfirmOrder, payload }`).
   */
  async enqueueMany<const T extends readonly unknown[]>(
    jobs: { readonly [K in keyof T]: JobSpec | (DefinedJobSpec<T[K]> & Omit<EnqueueJobOptions, 'manager'>) },
    options: { manager?: EntityManager } = {},
  ): Promise<EnqueueResult[]> {
    if (!Array.isArray(jobs)) throw new InvalidArgumentError('enqueueMany needs an array of jobs.', 'jobs');
    const { manager } = checkOptions(options, ['manager'], { what: 'enqueueMany' }) ?? {};
    const inputs = jobs.map((job, i) => this.input(job, i));
    const write = (trace: TraceContext | undefined) =>
      this.store.jobEnqueueMany({
        jobs: trace ? inputs.map((input) => (input.traceContext ? input : { ...input, traceContext: trace })) : inputs,
        ...(manager ? { manager } : undefined),
      });
    const { telemetry } = this.orchestrator;
    if (!telemetry || inputs.length === 0) return write(undefined);
    const queues = new Map<string, number>();
    for (const input of inputs) queues.set(input.queue ?? DEFAULT_QUEUE, (queues.get(input.queue ?? DEFAULT_QUEUE) ?? 0) + 1);
    const names = new Set(inputs.map((input) => input.name));
    // One span for the call, as one statement writes it.
    const info = names.size === 1 ? { queues, name: inputs[0]!.name } : { queues };
    return telemetry.send(info, write, (results) => (results.length === 1 ? results[0]!.id : undefined));
  }

  /**
   * Writes a batch in one transaction: its jobs, and callback jobs that wait for all of them.
   * `onSuccess` runs once every job succeeded, `onComplete` once every job ended however it ended,
   * `onFailure` once every job ended and one did not succeed; each runs at most once, released by
   * the outcome write that ends the batch's last job (docs/batches.md). Each job and callback names
   * its job as `enqueueMany` does. With `manager`, the batch commits or rolls back with that transaction.
   */
  async enqueueBatch<const T extends readonly unknown[], S = unknown, C = unknown, F = unknown>(
    jobs: { readonly [K in keyof T]: JobSpec | (DefinedJobSpec<T[K]> & Omit<EnqueueJobOptions, 'manager'>) },
    options: BatchCallbacks<S, C, F> & { readonly manager?: EntityManager },
  ): Promise<EnqueueBatchResult> {
    if (!Array.isArray(jobs)) throw new InvalidArgumentError('enqueueBatch needs an array of jobs.', 'jobs');
    const { manager, onSuccess, onComplete, onFailure } = checkOptions(options, ['onSuccess', 'onComplete', 'onFailure', 'manager'], { what: 'enqueueBatch' }) ?? {};
    const callback = (spec: BatchCallbackSpec<S> | BatchCallbackSpec<C> | BatchCallbackSpec<F> | undefined, key: string) => (spec === undefined ? {} : { [key]: this.input(spec as Parameters<SchedulerClient['input']>[0], undefined, key) });
    return this.store.jobEnqueueBatch({
      jobs: jobs.map((job, i) => this.input(job, i)),
      ...callback(onSuccess, 'onSuccess'),
      ...callback(onComplete, 'onComplete'),
      ...callback(onFailure, 'onFailure'),
      ...(manager ? { manager } : undefined),
    });
  }

  /** A batch's counts, failed job ids (up to `failedLimit`, default 1,000) and callbacks; null when no stored job belongs to it. */
  getBatch(batchId: string, options: { readonly failedLimit?: number } = {}): Promise<BatchSummary | null> {
    const { failedLimit } = checkOptions(options, ['failedLimit'], { what: 'getBatch' }) ?? {};
    return this.store.jobBatch({ batchId, ...(failedLimit === undefined ? {} : { failedLimit }) });
  }

  /** Batches, newest first: one page of up to `limit` (default 50), written before the batch `before` names when given. */
  listBatches(params?: ListBatchesParams): Promise<BatchSummary[]> {
    return this.store.jobListBatches(params);
  }

  /**
   * Waits until the batch has ended and each of its callbacks has ended too, and resolves with the
   * batch as read then. Rejects with `BatchNotFoundError` for an unknown id, `BatchWaitTimeoutError`
   * after `timeoutMs` and `BatchWaitAbortedError` when `signal` aborts; the batch is left as it is.
   */
  waitForBatch(batchId: string, options?: WaitForOptions): Promise<BatchSummary> {
    return waitForBatch(this.store, this.orchestrator.waiter, batchId, options);
  }

  /**
   * Cancels every job of the batch that has not ended, callbacks first, so none of them runs: a
   * waiting job at once, a running one by asking it to stop. Each is audited as a cancel.
   */
  cancelBatch(batchId: string): Promise<BatchCancelResult> {
    return this.store.jobCancelBatch({ batchId });
  }

  /** Cancels a waiting job at once, asks a running one to stop, or discards a dead-lettered or quarantined one. */
  cancel(jobId: string): Promise<CancelResult> {
    return this.store.jobCancel({ jobId });
  }

  /** Brings a dead-lettered or quarantined job back: attempt 0, due now. */
  replay(jobId: string): Promise<JobRecord> {
    return this.store.jobReplay({ jobId });
  }

  /** Makes a scheduled job that waits for a later run time or a retry due now, keeping its attempts. */
  runNow(jobId: string): Promise<JobRecord> {
    return this.store.jobRunNow({ jobId });
  }

  /** Stops claims from a queue; its jobs keep their places. */
  pause(queue: string): Promise<void> {
    return this.store.queuePause({ queue });
  }

  resume(queue: string): Promise<void> {
    return this.store.queueResume({ queue });
  }

  get(jobId: string): Promise<JobRecord | null> {
    return this.store.jobGet({ jobId });
  }

  /**
   * Waits until the job is finished: resolves with its output once it succeeded; rejects with
   * `JobFailedError` (carrying `lastError`) once it is dead-lettered, cancelled or quarantined,
   * `JobNotFoundError` for an unknown id, `JobWaitTimeoutError` after `timeoutMs`,
   * `JobWaitAbortedError` when `signal` aborts, and `JobWaiterClosedError` when the module shuts
   * down first. All waits share one batched poll; a job's handler should not wait for another job
   * (docs/awaiting-results.md says why, and what to do instead).
   */
  waitFor(jobId: string, options?: WaitForOptions): Promise<JobWaitResult> {
    return this.orchestrator.waiter.waitFor(jobId, options);
  }

  /**
   * Jobs, newest first: one page of up to `limit` (default 50), older than the job `before`
   * names when given. Use {@link SchedulerClient.listPage} to page on.
   */
  list(params?: ListJobsParams): Promise<JobRecord[]> {
    return this.store.jobList(params);
  }

  /**
   * One page of jobs, newest first, with `next`: pass it as `before` for the following page (null
   * when no older job is left). A page looks at no more than 10,000 jobs, so with a filter that
   * few jobs match it may hold fewer than `limit` and still have a `next`.
   */
  listPage(params?: ListJobsParams): Promise<JobPage> {
    return this.store.jobListPage(params);
  }

  /** Dead-lettered jobs, most recent first. */
  listDeadLettered(limit?: number): Promise<JobRecord[]> {
    return this.store.jobListDeadLettered({ limit });
  }

  /**
   * Sequences whose next job waits behind a job that failed for good, one per key in key order:
   * replay that job (it must then succeed) or cancel it to let the sequence go on. Pass the last key
   * of a full page as `after` for the next page. See docs/sequences.md.
   */
  listBlockedSequences(params?: ListBlockedSequencesParams): Promise<BlockedSequence[]> {
    return this.store.jobListBlockedSequences(params);
  }

  /**
   * Groups with waiting jobs, in group order, a page at a time: each with its due and later jobs
   * (counted up to 1,000), the run time of its longest-waiting due job and its key's cap. Pass the
   * last group of a full page as `after` for the next page. See docs/groups.md.
   */
  listGroups(params?: ListGroupsParams): Promise<WaitingGroup[]> {
    return this.store.jobListGroups(params);
  }

  /**
   * Creates a recurring schedule (or updates the one with this `id`) that mints `name` jobs: give
   * `cron` (with an optional IANA `timezone`) or `everyMs`. Each occurrence's job id is its
   * occurrence id. Queue and attempts default to the job's `@Job` options.
   */
  async schedule<P>(spec: DefinedScheduleSpec<P>): Promise<Schedule>;
  async schedule<N extends JobName>(spec: ScheduleSpec<N>): Promise<Schedule>;
  async schedule(spec: ScheduleSpec | DefinedScheduleSpec<unknown>): Promise<Schedule> {
    if (spec === null || typeof spec !== 'object' || Array.isArray(spec)) {
      throw new InvalidArgumentError('A schedule must be an object with a name and a cron pattern or an interval.', 'schedule');
    }
    const { job, name, ...rest } = readOnce(spec as ScheduleSpec & { job?: unknown }, ['job', 'name']);
    const registered = this.registered({ name, job }, 'name');
    // The active span's context, so each occurrence's span links to the code that set the schedule up.
    const traceContext = this.orchestrator.telemetry?.activeTraceContext();
    const input = { queue: registered.queue, maxAttempts: registered.maxAttempts, ...(traceContext ? { traceContext } : {}), ...stripUndefined(rest), name: registered.name };
    const { schedule } = await this.store.scheduleUpsert({ schedule: input });
    this.orchestrator.node.minter.poke();
    return schedule;
  }

  pauseSchedule(scheduleId: string): Promise<Schedule> {
    return this.store.schedulePause({ scheduleId });
  }

  resumeSchedule(scheduleId: string): Promise<Schedule> {
    return this.store.scheduleResume({ scheduleId });
  }

  /** Mints one occurrence now, outside the pattern. */
  triggerSchedule(scheduleId: string): Promise<EnqueueResult> {
    return this.store.scheduleTrigger({ scheduleId });
  }

  /** Deletes a schedule; jobs it already minted stay. */
  removeSchedule(scheduleId: string): Promise<boolean> {
    return this.store.scheduleRemove({ scheduleId });
  }

  /** Replays the occurrence that dead-lettered a schedule, and lets the schedule mint again. */
  replaySchedule(scheduleId: string): Promise<{ schedule: Schedule; job: JobRecord | null }> {
    return this.store.scheduleReplay({ scheduleId });
  }

  getSchedule(scheduleId: string): Promise<Schedule | null> {
    return this.store.scheduleGet({ scheduleId });
  }

  /** Schedules oldest first, a page at a time: 50 by default; pass the last id as `after` for the next page. */
  listSchedules(params?: ScheduleListParams): Promise<Schedule[]> {
    return this.store.scheduleList(params);
  }

  /** Sets, changes or (with null) removes the cluster-wide cap of a queue or a concurrency key. */
  setConcurrencyLimit(target: LimitTarget, max: number | null): Promise<void> {
    return this.store.concurrencyLimitSet({ target, max });
  }

  listConcurrencyLimits(): Promise<ConcurrencyLimit[]> {
    return this.store.concurrencyLimitList();
  }

  /**
   * Sets, changes or (with null) removes the rate limit of a queue or a concurrency key: at most
   * `max` starts in any window of `perMs` milliseconds, cluster-wide. A new limit counts starts
   * from now on; a changed one keeps the starts it already counted (lowered, the most recent).
   * Audited. See docs/rate-limits.md.
   */
  setRateLimit(target: LimitTarget, rate: Rate | null): Promise<void> {
    return this.store.rateLimitSet({ target, rate });
  }

  /** Every rate limit, queue-wide and per key, with its rate. */
  listRateLimits(): Promise<RateLimit[]> {
    return this.store.rateLimitList();
  }

  /**
   * A rate limit's window now, by the store's clock: the starts it counted, and while every start
   * is used, when the next one frees. Null when the queue or key has no rate limit.
   */
  rateLimitStatus(target: LimitTarget): Promise<RateLimitStatus | null> {
    return this.store.rateLimitStatus({ target });
  }

  /** A job's state changes, oldest first (empty under historyPolicy `off`). */
  history(jobId: string): Promise<HistoryEntry[]> {
    return this.store.jobHistory({ jobId });
  }

  /** The defaults of what a call names: a definition (`job`), or a `name` known on this node. */
  private registered(named: { readonly name?: unknown; readonly job?: unknown }, argument: string): JobDefaults {
    if (named.job !== undefined) {
      if (named.name !== undefined) throw new InvalidArgumentError(`${argument} and job are both set; name the job by one of them.`, argument);
      if (!isDefinedJob(named.job)) throw new InvalidArgumentError(`job must be a definition made by defineJob, got ${showValue(named.job)}.`, 'job');
      return definitionDefaults(named.job, this.registry.defaultMaxAttempts);
    }
    const registered = typeof named.name === 'string' ? this.registry.defaults(named.name) : undefined;
    if (!registered) throw new InvalidArgumentError(UNKNOWN_JOB_NAME(showValue(named.name)), argument);
    return registered;
  }

  private input(
    job: { readonly name?: string; readonly job?: DefinedJob; readonly payload: unknown } & Omit<EnqueueJobOptions, 'manager'>,
    index: number | undefined,
    where?: string,
  ): EnqueueInput {
    if (job === null || typeof job !== 'object') {
      throw new InvalidArgumentError(`${where ?? (index === undefined ? 'The job' : `jobs[${index}]`)} must be an object with a name and a payload.`, where ?? 'jobs');
    }
    const { name, job: definition, payload, ...options } = readOnce(job, ['name', 'job', 'payload']);
    const registered = this.registered({ name, job: definition }, where !== undefined ? `${where}.name` : index === undefined ? 'name' : `jobs[${index}].name`);
    const priority = registered.priority === undefined ? {} : { priority: registered.priority };
    // The handler's sequence unless the call names its own: its key function may throw for a payload
    // it was not meant for. A batch callback (`where`) waits for its batch, never for a sequence.
    const sequence = options.sequence === undefined && where === undefined ? declaredSequence(registered.name, registered.sequence, payload) : {};
    const group = options.group === undefined ? this.computed(registered, 'group', payload) : {};
    return { queue: registered.queue, maxAttempts: registered.maxAttempts, ...priority, ...group, ...this.concurrency(registered, payload, options.group), ...sequence, ...stripUndefined(options), name: registered.name, payload };
  }

  /** The group the handler's options compute for this payload, or nothing when they set none. */
  private computed(registered: JobDefaults, option: 'group', payload: unknown): { group?: string } {
    const compute = registered[option];
    if (!compute) return {};
    return { [option]: this.keyOf(registered.name, option, compute, payload) };
  }

  /** Runs a key function of `@Job` options on a payload; a throw or a bad answer is refused in one sentence. */
  private keyOf(name: string, option: string, compute: (payload: unknown) => unknown, payload: unknown): string {
    let key: unknown;
    try {
      key = compute(payload);
    } catch (error) {
      // Not the function's message: it may quote the payload, and this error may well be logged.
      throw new InvalidArgumentError(
        `The ${option} function of @Job '${name}' threw for this payload (${isInstance(error, Error) ? describeError(error, 'class') : typeof error}); nothing was written.`,
        option,
      );
    }
    if (typeof key !== 'string' || key.length === 0) {
      throw new InvalidArgumentError(`The ${option} function of @Job '${name}' must return a non-empty string, got ${showValue(key)}.`, option);
    }
    return key;
  }

  /** The key (and limit and rate) the handler's options declare for this payload. */
  private concurrency(registered: JobDefaults, payload: unknown, group: string | undefined): Pick<EnqueueInput, 'concurrencyKey' | 'concurrencyLimit' | 'rateLimit'> {
    if (!registered.concurrencyKey) return {};
    // A key that is the handler's group follows the group an enqueue gives.
    const fromGroup = registered.concurrencyKey === registered.group;
    const key = fromGroup && group !== undefined ? group : this.keyOf(registered.name, fromGroup ? 'group' : 'concurrencyKey', registered.concurrencyKey, payload);
    return {
      concurrencyKey: key,
      ...(registered.concurrencyLimit === undefined ? {} : { concurrencyLimit: registered.concurrencyLimit }),
      ...(registered.rateLimit === undefined ? {} : { rateLimit: registered.rateLimit }),
    };
  }
}

/** The options argument: absent, or an object. */
function optionsObject<T extends object>(options: T | undefined, argument: string): Partial<T> {
  if (options === undefined) return {};
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new InvalidArgumentError(`${argument} must be an object, got ${showValue(options)}.`, argument);
  }
  return options;
}

/**
 * A plain copy of `value`: the `named` fields (own or inherited) and its other own enumerable
 * ones, each read exactly once, so what is checked is what is written. (Object rest is no
 * substitute: V8 may read an excluded getter twice.)
 */
function readOnce<T extends object>(value: T, named: readonly string[]): T {
  const source = value as Record<string, unknown>;
  const copy: Record<string, unknown> = {};
  for (const key of named) copy[key] = source[key];
  for (const key of Object.keys(value)) if (!named.includes(key)) copy[key] = source[key];
  return copy as T;
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
