import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import type { InstanceWrapper } from '@nestjs/core/injector/instance-wrapper.js';
import {
  assertMaxAttempts,
  assertPriority,
  assertNonEmptyString,
  assertPositiveInteger,
  assertQueueName,
  assertRate,
  assertWireName,
  InvalidArgumentError,
  isJobState,
  resolveRetryPolicy,
  showKey,
  showValue,
} from '../core/index.js';
import { declaredScheduleId, DEFAULT_MAX_ATTEMPTS, DEFAULT_QUEUE, normalizeSchedule, type JobStore, type ScheduleInput } from '../store/index.js';
import {
  assertBatchWaitFitsLease,
  assertMaxSnoozes,
  BATCH_TRANSACTION,
  resolveBatchOptions,
  type ResolvedBatchOptions,
  type ResolvedWorkerOptions,
  type TransitionEvent,
  type TransitionObserver,
} from '../worker/index.js';
import type { JobOptions } from './interfaces/job-options.interface.js';
import type { SchedulerModuleOptions } from './interfaces/scheduler-module-options.interface.js';
import { JobHandlerRegistry } from './job-handler.registry.js';
import { SchedulerMetadataAccessor } from './scheduler-metadata.accessor.js';
import { SCHEDULER_MODULE_OPTIONS } from './scheduler.module-definition.js';
import type { OnJobTransitionOptions } from './decorators/on-job-transition.decorator.js';
import {
  BAD_HANDLER_OPTION,
  BAD_OBSERVER,
  DUPLICATE_JOB_NAME,
  DUPLICATE_OBSERVER,
  HISTORY_POLICY_MISMATCH,
  MISSING_HANDLE_METHOD,
  OBSERVERS_WITHOUT_HISTORY,
  UNKNOWN_QUEUE,
} from './scheduler.messages.js';
import { assertObserversHaveWorker, registerDefinedJobs } from './defined-jobs.js';
import { SCHEDULER_STORE, SCHEDULER_WORKER_OPTIONS } from './scheduler.tokens.js';
import { checkJobSequence } from './job-sequence.js';

/** Every option `@Job` takes; anything else is a typo, refused rather than ignored. */
const JOB_OPTION_KEYS = new Set(['name', 'queue', 'maxAttempts', 'priority', 'retry', 'timeoutMs', 'transaction', 'schedule', 'validate', 'maxSnoozes', 'group', 'concurrencyKey', 'concurrencyLimit', 'rateLimit', 'sequence', 'batch']);
/** Longest `timeoutMs`: the longest a timer can wait (about 24.8 days). */
const MAX_TIMEOUT_MS = 2_147_483_647;

/**
 * Runs a check of one `@Job` option, putting the class and the wire name in front of its message,
 * so the error says which declaration to fix.
 */
function ownedBy(className: string, name: string) {
  return <T>(check: () => T): T => {
    try {
      return check();
    } catch (error) {
      if (!(error instanceof InvalidArgumentError) || error.message.startsWith(className)) throw error;
      throw new InvalidArgumentError(`${className} (@Job '${name}') ${error.message}`, error.argument, error.code);
    }
  };
}

/**
 * Finds every `@Job` provider and registers it by wire name. Any mistake a handler declaration can
 * carry (a duplicate name, a missing `handle`, an unknown queue, bad options, a bad schedule) stops
 * the application from booting, with a sentence naming the class.
 *
 * The handlers are checked when Nest creates this provider, not in a lifecycle hook: an error
 * thrown while Nest creates instances takes its boot error path (Nest's logger reports it and
 * `NestFactory.create` fails), while one thrown from `onModuleInit` only rejects `app.listen()` or
 * `app.init()`, which a `main.ts` that does not catch it turns into an unhandled rejection.
 * Declarations need only the classes and their metadata, which Nest knows before any instance
 * exists. Observers are bound to instances, so they are found at module init.
 */
@Injectable()
export class SchedulerExplorer implements OnModuleInit {
  private readonly logger = new Logger('DurableScheduler');

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly metadata: SchedulerMetadataAccessor,
    private readonly registry: JobHandlerRegistry,
    @Inject(SCHEDULER_MODULE_OPTIONS) private readonly options: SchedulerModuleOptions,
    @Inject(SCHEDULER_STORE) private readonly store: JobStore,
    @Inject(SCHEDULER_WORKER_OPTIONS) private readonly worker: ResolvedWorkerOptions,
  ) {
    this.exploreJobs();
  }

  onModuleInit(): void {
    this.exploreObservers();
    assertObserversHaveWorker(this.registry, this.options);
  }

  private exploreJobs(): void {
    const worker = this.worker;
    const defaultMaxAttempts = this.options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
    this.registry.defaultMaxAttempts = defaultMaxAttempts;
    const owners = new Map<string, Function>();

    for (const wrapper of this.discovery.getProviders()) {
      const metatype = wrapper.metatype as Function | undefined;
      const options = this.metadata.jobOptions(metatype);
      if (!options || !metatype) continue;
      const className = metatype.name || 'an anonymous class';
      const name = assertWireName(options.name, this.store.limits.maxNameLength, `@Job name on ${className}`);
      const owner = owners.get(name);
      if (owner === metatype) continue; // the same class provided by two modules
      if (owner) throw new InvalidArgumentError(DUPLICATE_JOB_NAME(name, owner.name, className), 'name');
      owners.set(name, metatype);
      if (typeof (metatype.prototype as { handle?: unknown })?.handle !== 'function') {
        throw new InvalidArgumentError(MISSING_HANDLE_METHOD(className, name, options.batch !== undefined), 'handle');
      }
      const owned = ownedBy(className, name);
      for (const key of Object.keys(options)) {
        if (!JOB_OPTION_KEYS.has(key)) {
          throw new InvalidArgumentError(`${className} (@Job '${name}') sets ${showKey(key)}, which is not a @Job option; known options are ${[...JOB_OPTION_KEYS].join(', ')}.`, key);
        }
      }
      const queue = options.queue === undefined ? DEFAULT_QUEUE : owned(() => assertQueueName(options.queue, 'queue'));
      // A producer-only node runs no handler, so its queues say nothing about where handlers run.
      if (this.options.worker !== false && worker.queues.length > 0 && !worker.queues.includes(queue)) {
        throw new InvalidArgumentError(UNKNOWN_QUEUE(className, name, queue, worker.queues), 'queue');
      }
      const maxAttempts =
        options.maxAttempts === undefined
          ? defaultMaxAttempts
          : owned(() => assertMaxAttempts(options.maxAttempts, this.store.limits.maxAttemptsCeiling, 'maxAttempts'));
      const priority = options.priority === undefined ? undefined : owned(() => assertPriority(options.priority, 'priority'));
      const concurrency = owned(() => this.concurrency(className, name, options));
      const sequence = owned(() => checkJobSequence(options.sequence));
      if (options.validate !== undefined && typeof options.validate !== 'function') {
        throw new InvalidArgumentError(BAD_HANDLER_OPTION(className, name, 'validate', 'a function'), 'validate');
      }
      if (options.transaction !== undefined && typeof options.transaction !== 'boolean') {
        throw new InvalidArgumentError(BAD_HANDLER_OPTION(className, name, 'transaction', 'true or false'), 'transaction');
      }
      const retry = owned(() => resolveRetryPolicy(options.retry, worker.retry));
      const timeoutMs = options.timeoutMs === undefined ? undefined : owned(() => assertPositiveInteger(options.timeoutMs, 'timeoutMs', MAX_TIMEOUT_MS));
      const maxSnoozes = options.maxSnoozes === undefined ? {} : { maxSnoozes: owned(() => assertMaxSnoozes(options.maxSnoozes)) };
      const batch = options.batch === undefined ? undefined : this.batchOptions(name, options, owned);
      this.registry.add({
        name,
        ...concurrency,
        ...(sequence === undefined ? {} : { sequence }),
        metatype: metatype as never,
        wrapper,
        options,
        queue,
        maxAttempts,
        ...(priority === undefined ? {} : { priority }),
        schedule: options.schedule !== undefined ? this.declaredSchedule(name, className, queue, maxAttempts, options.schedule) : undefined,
        definition: {
          retry,
          timeoutMs,
          // A batch handler's jobs each write their outcome on their own lease: no attempt transaction.
          transaction: batch === undefined ? (options.transaction ?? true) : false,
          validate: options.validate,
          ...maxSnoozes,
          ...(batch === undefined ? {} : { batch }),
        },
      });
    }
    this.logger.log(`registered ${owners.size} job handler(s): ${this.registry.names().join(', ') || 'none'}.`);
    const defined = registerDefinedJobs(this.registry, this.options, this.store.limits);
    if (defined.length > 0) this.logger.log(`knows ${defined.length} job definition(s) with no handler here: ${defined.join(', ')}.`);
  }

  /**
   * Checks a batch handler's `batch`, refuses `transaction: true` (each job's outcome is written on
   * its own lease, after the call), and checks its wait against the lease the node renews.
   */
  private batchOptions(name: string, options: JobOptions<string>, owned: ReturnType<typeof ownedBy>): ResolvedBatchOptions {
    const batch = owned(() => resolveBatchOptions(options.batch, 'batch'));
    if (options.transaction === true) throw new InvalidArgumentError(BATCH_TRANSACTION(name), 'transaction');
    assertBatchWaitFitsLease(name, batch, this.worker.leaseMs);
    return batch;
  }

  private concurrency(className: string, name: string, options: JobOptions<string>) {
    const { group, concurrencyKey, concurrencyLimit, rateLimit } = options;
    if (group !== undefined && typeof group !== 'function') {
      throw new InvalidArgumentError(BAD_HANDLER_OPTION(className, name, 'group', 'a function of the payload'), 'group');
    }
    if (concurrencyKey !== undefined && typeof concurrencyKey !== 'function') {
      throw new InvalidArgumentError(BAD_HANDLER_OPTION(className, name, 'concurrencyKey', 'a function of the payload'), 'concurrencyKey');
    }
    const grouped = group === undefined ? {} : { group: group as (payload: unknown) => string };
    if (concurrencyLimit === undefined && rateLimit === undefined) return concurrencyKey ? { ...grouped, concurrencyKey: concurrencyKey as (payload: unknown) => string } : grouped;
    const limit = concurrencyLimit === undefined ? {} : { concurrencyLimit: assertPositiveInteger(concurrencyLimit, 'concurrencyLimit', 10_000) };
    const rate = rateLimit === undefined ? {} : { rateLimit: assertRate(rateLimit, 'rateLimit') };
    // A limit without a key governs each group, or the job itself, keyed by its wire name.
    return { ...grouped, concurrencyKey: (concurrencyKey as ((payload: unknown) => string) | undefined) ?? grouped.group ?? (() => name), ...limit, ...rate };
  }

  /** Binds every `@OnJobTransition` method of a singleton provider, checking its options now. */
  private exploreObservers(): void {
    const policy = this.options.historyPolicy;
    if (this.options.store && policy !== undefined && policy !== this.store.historyPolicy) {
      throw new InvalidArgumentError(HISTORY_POLICY_MISMATCH(policy, this.store.historyPolicy), 'historyPolicy');
    }
    const ids = new Set<string>();
    for (const wrapper of this.discovery.getProviders()) {
      const instance = wrapper.instance as Record<string, unknown> | undefined;
      if (!instance || typeof instance !== 'object') continue;
      for (const method of this.scanner.getAllMethodNames(Object.getPrototypeOf(instance))) {
        const options = this.metadata.observerOptions(instance[method] as Function);
        if (!options) continue;
        const observer = this.observer(wrapper, instance, method, options);
        if (ids.has(observer.id)) throw new InvalidArgumentError(DUPLICATE_OBSERVER(observer.id), 'id');
        ids.add(observer.id);
        this.registry.observers.push(observer);
      }
    }
    if (this.registry.observers.length === 0) return;
    if (this.store.historyPolicy === 'off') {
      throw new InvalidArgumentError(OBSERVERS_WITHOUT_HISTORY(this.registry.observers.map((o) => o.id)), 'historyPolicy');
    }
    this.logger.log(`registered ${this.registry.observers.length} transition observer(s): ${this.registry.observers.map((o) => o.id).join(', ')}.`);
  }

  private observer(wrapper: InstanceWrapper, instance: Record<string, unknown>, method: string, options: OnJobTransitionOptions): TransitionObserver {
    const where = `${wrapper.metatype?.name ?? 'an anonymous class'}.${method}`;
    if (!wrapper.isDependencyTreeStatic()) {
      throw new InvalidArgumentError(BAD_OBSERVER(where, 'is on a request-scoped provider; observers run outside any attempt, so make the provider a singleton'), 'observer');
    }
    const to = options.to;
    if (!Array.isArray(to) || to.length === 0 || !to.every(isJobState)) {
      throw new InvalidArgumentError(BAD_OBSERVER(where, 'needs `to`: a non-empty list of job states'), 'to');
    }
    const jobs = options.job === undefined ? undefined : (Array.isArray(options.job) ? options.job : [options.job]) as string[];
    jobs?.forEach((job, i) => assertWireName(job, this.store.limits.maxNameLength, `@OnJobTransition on ${where} job[${i}]`));
    const id = options.id === undefined ? where : assertNonEmptyString(options.id, `@OnJobTransition on ${where} id`, 200);
    const fn = instance[method] as (event: TransitionEvent) => unknown;
    return { id, to: [...to], ...(jobs ? { jobs } : {}), deliver: async (event) => void (await fn.call(instance, event)) };
  }

  /** Checks a declared schedule now, so a bad cron pattern or time zone stops the boot. */
  private declaredSchedule(name: string, className: string, queue: string, maxAttempts: number, declared: NonNullable<JobOptions<string>['schedule']>): ScheduleInput {
    if (declared === null || typeof declared !== 'object' || Array.isArray(declared)) {
      throw new InvalidArgumentError(
        `${className} (@Job '${name}') declares a bad schedule: it must be an object such as { cron: '0 3 * * *' } or { everyMs: 60000 }, got ${showValue(declared)}.`,
        'schedule',
      );
    }
    const input: ScheduleInput = { ...declared, id: declaredScheduleId(name), name, queue, maxAttempts };
    try {
      normalizeSchedule(input, this.store.limits);
    } catch (error) {
      if (error instanceof InvalidArgumentError) {
        throw new InvalidArgumentError(`${className} (@Job '${name}') declares a bad schedule: ${error.message}`, `schedule.${error.argument}`);
      }
      throw error;
    }
    return input;
  }
}
