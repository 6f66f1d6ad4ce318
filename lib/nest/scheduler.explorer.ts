import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import {
  assertMaxAttempts,
  assertPositiveInteger,
  assertQueueName,
  assertWireName,
  InvalidArgumentError,
  resolveRetryPolicy,
} from '../core/index.js';
import { declaredScheduleId, DEFAULT_MAX_ATTEMPTS, DEFAULT_QUEUE, normalizeSchedule, type JobStore, type ScheduleInput } from '../store/index.js';
import { resolveWorkerOptions } from '../worker/index.js';
import type { JobOptions } from './interfaces/job-options.interface.js';
import type { SchedulerModuleOptions } from './interfaces/scheduler-module-options.interface.js';
import { JobHandlerRegistry } from './job-handler.registry.js';
import { SchedulerMetadataAccessor } from './scheduler-metadata.accessor.js';
import { SCHEDULER_MODULE_OPTIONS } from './scheduler.module-definition.js';
import { DUPLICATE_JOB_NAME, MISSING_HANDLE_METHOD, UNKNOWN_QUEUE } from './scheduler.messages.js';
import { SCHEDULER_STORE } from './scheduler.tokens.js';

/**
 * Finds every `@Job` provider at module init and registers it by wire name. Any mistake a handler
 * declaration can carry (a duplicate name, a missing `handle`, an unknown queue, bad options) stops
 * the application from booting, with a sentence naming the class.
 */
@Injectable()
export class SchedulerExplorer implements OnModuleInit {
  private readonly logger = new Logger('DurableScheduler');

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly metadata: SchedulerMetadataAccessor,
    private readonly registry: JobHandlerRegistry,
    @Inject(SCHEDULER_MODULE_OPTIONS) private readonly options: SchedulerModuleOptions,
    @Inject(SCHEDULER_STORE) private readonly store: JobStore,
  ) {}

  onModuleInit(): void {
    const worker = resolveWorkerOptions(this.options);
    const defaultMaxAttempts =
      this.options.maxAttempts === undefined
        ? DEFAULT_MAX_ATTEMPTS
        : assertMaxAttempts(this.options.maxAttempts, this.store.limits.maxAttemptsCeiling, 'maxAttempts');
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
        throw new InvalidArgumentError(MISSING_HANDLE_METHOD(className, name), 'handle');
      }
      const queue = options.queue === undefined ? DEFAULT_QUEUE : assertQueueName(options.queue, `@Job('${name}') queue`);
      if (worker.queues.length > 0 && !worker.queues.includes(queue)) {
        throw new InvalidArgumentError(UNKNOWN_QUEUE(className, name, queue, worker.queues), 'queue');
      }
      const maxAttempts =
        options.maxAttempts === undefined
          ? defaultMaxAttempts
          : assertMaxAttempts(options.maxAttempts, this.store.limits.maxAttemptsCeiling, `@Job('${name}') maxAttempts`);
      this.registry.add({
        name,
        metatype: metatype as never,
        wrapper,
        options,
        queue,
        maxAttempts,
        schedule: options.schedule ? this.declaredSchedule(name, className, queue, maxAttempts, options.schedule) : undefined,
        definition: {
          retry: resolveRetryPolicy(options.retry, worker.retry),
          timeoutMs: options.timeoutMs === undefined ? undefined : assertPositiveInteger(options.timeoutMs, `@Job('${name}') timeoutMs`),
          transaction: options.transaction ?? true,
        },
      });
    }
    this.logger.log(`registered ${owners.size} job handler(s): ${this.registry.names().join(', ') || 'none'}.`);
  }

  /** Checks a declared schedule now, so a bad cron pattern or time zone stops the boot. */
  private declaredSchedule(name: string, className: string, queue: string, maxAttempts: number, declared: NonNullable<JobOptions<string>['schedule']>): ScheduleInput {
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
