import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { HealthIndicatorService, type HealthIndicatorResult } from '@nestjs/terminus';
import { checkOptions, InvalidArgumentError, showValue } from '../core/index.js';
import { SchedulerOrchestrator } from '../nest/scheduler.orchestrator.js';
import { SCHEDULER_STORE } from '../nest/scheduler.tokens.js';
import type { JobStore } from '../store/index.js';

/** What {@link SchedulerHealthIndicator.isHealthy} checks besides the worker itself. Every field is optional. */
export interface SchedulerHealthOptions {
  /**
   * The longest the worker may go without a claim, heartbeat or registry beat reaching the store.
   * Default: three times the longer of its poll and heartbeat intervals.
   */
  readonly maxContactAgeMs?: number;
  /** Down when the oldest due job of any queue has waited longer than this. Unset: not checked. */
  readonly maxOldestDueAgeMs?: number;
  /** Down when more jobs than this are dead-lettered. Unset: not checked. */
  readonly maxDeadLetters?: number;
  /** Down when PostgreSQL's wake-up connection is lost. Default true; polling still runs without it. */
  readonly requireWakeListener?: boolean;
}

const KNOWN = new Set(['maxContactAgeMs', 'maxOldestDueAgeMs', 'maxDeadLetters', 'requireWakeListener']);

/**
 * A `@nestjs/terminus` health indicator for this node's scheduler. Down (503 through
 * `HealthCheckService`) when the worker is not running, has not reached the store lately, has lost
 * PostgreSQL's wake-up connection, or when a threshold the host set is crossed; up otherwise. Its
 * details say which, with the nodes the registry knows. A node built with `worker: false` checks
 * only the store and the thresholds.
 */
@Injectable()
export class SchedulerHealthIndicator implements OnModuleInit {
  private orchestrator!: SchedulerOrchestrator;
  private store!: JobStore;

  constructor(
    @Inject(HealthIndicatorService) private readonly health: HealthIndicatorService,
    @Inject(ModuleRef) private readonly moduleRef: ModuleRef,
  ) {}

  /** Finds the app's scheduler wherever SchedulerModule was imported, global or not. */
  onModuleInit(): void {
    try {
      this.orchestrator = this.moduleRef.get(SchedulerOrchestrator, { strict: false });
      this.store = this.moduleRef.get<JobStore>(SCHEDULER_STORE, { strict: false });
    } catch {
      throw new Error('SchedulerHealthIndicator found no scheduler: import SchedulerModule.forRoot(...) in the same app.');
    }
  }

  async isHealthy<const Key extends string = 'scheduler'>(key: Key = 'scheduler' as Key, options: SchedulerHealthOptions = {}): Promise<HealthIndicatorResult<Key>> {
    const checked = checkHealthOptions(options);
    const indicator = this.health.check(key);
    const problems: string[] = [];
    const details: Record<string, unknown> = {};
    const { node } = this.orchestrator;
    const runsWorker = this.orchestrator.runsWorker;
    if (runsWorker) {
      const health = node.health();
      const maxContactAgeMs = checked.maxContactAgeMs ?? 3 * Math.max(node.options.pollIntervalMs, node.options.heartbeatIntervalMs);
      // A node that just started has had no contact yet: its age counts from its start.
      const since = health.lastContactAt ?? health.startedAt;
      const contactAgeMs = since === null ? null : Date.now() - since.getTime();
      Object.assign(details, { worker: health.status, workerId: node.workerId, inFlight: health.inFlight, lastContactAt: health.lastContactAt?.toISOString() ?? null, wakeListener: health.wakeListener });
      if (health.status !== 'running') problems.push(`the worker is ${health.status}, not running`);
      else if (contactAgeMs === null || contactAgeMs > maxContactAgeMs) problems.push(`the worker has not reached the store for over ${maxContactAgeMs} ms`);
      if (checked.requireWakeListener !== false) {
        if (health.wakeListener === 'disconnected') problems.push('the wake-up listener is disconnected');
        // Connecting is normal for a moment after start; for longer than the contact window, it is stuck.
        const startedAgoMs = health.startedAt === null ? 0 : Date.now() - health.startedAt.getTime();
        if (health.wakeListener === 'connecting' && startedAgoMs > maxContactAgeMs) problems.push(`the wake-up listener has not connected in ${startedAgoMs} ms`);
      }
    } else {
      details.worker = 'none';
    }
    try {
      const nodes = await this.store.nodeList();
      // Live: not stopped, and seen within three heartbeat intervals (the registry beats on that cadence).
      const liveWithinMs = 3 * node.options.heartbeatIntervalMs;
      const live = nodes.filter((n) => n.stoppedAt === null && Date.now() - n.lastSeenAt.getTime() <= liveWithinMs);
      details.nodes = { live: live.length, known: nodes.length };
      if (checked.maxOldestDueAgeMs !== undefined) {
        const due = await this.store.queueOldestDue();
        const oldest = due.queues.reduce<number | null>((min, q) => (q.oldestDueAt && (min === null || q.oldestDueAt.getTime() < min) ? q.oldestDueAt.getTime() : min), null);
        const ageMs = oldest === null ? 0 : Math.max(0, due.now.getTime() - oldest);
        details.oldestDueAgeMs = ageMs;
        if (ageMs > checked.maxOldestDueAgeMs) problems.push(`the oldest due job has waited ${ageMs} ms, over ${checked.maxOldestDueAgeMs} ms`);
      }
      if (checked.maxDeadLetters !== undefined) {
        const deadLetters = (await this.store.queueList()).reduce((sum, q) => sum + (q.counts.dead_lettered ?? 0), 0);
        details.deadLetters = deadLetters;
        if (deadLetters > checked.maxDeadLetters) problems.push(`${deadLetters} jobs are dead-lettered, over ${checked.maxDeadLetters}`);
      }
    } catch {
      problems.push('the store did not answer');
    }
    return problems.length === 0 ? indicator.up(details) : indicator.down({ ...details, message: `${problems.join('; ')}.` });
  }
}

function checkHealthOptions(options: SchedulerHealthOptions): SchedulerHealthOptions {
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new InvalidArgumentError(`The health options must be an object, got ${showValue(options)}.`, 'options');
  }
  checkOptions(options, KNOWN, { what: 'health' });
  for (const key of ['maxContactAgeMs', 'maxOldestDueAgeMs', 'maxDeadLetters'] as const) {
    const value = options[key];
    if (value !== undefined && (typeof value !== 'number' || !Number.isInteger(value) || value < 0)) {
      throw new InvalidArgumentError(`${key} must be a whole number of at least 0, got ${showValue(value)}.`, key);
    }
  }
  if (options.requireWakeListener !== undefined && typeof options.requireWakeListener !== 'boolean') {
    throw new InvalidArgumentError(`requireWakeListener must be true or false, got ${showValue(options.requireWakeListener)}.`, 'requireWakeListener');
  }
  return options;
}
