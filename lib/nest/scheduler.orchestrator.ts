import { Inject, Injectable, Logger, Optional, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import { InvalidArgumentError } from '../core/index.js';
import type { JobStore } from '../store/index.js';
import { SchedulerTelemetry } from '../telemetry/index.js';
import { checkScheduledVerifyOptions, ScheduledVerify } from '../verify/index.js';
import { allFinishHints, JobWaiter, nodeFinishHints, storeFinishHints, WorkerNode, type ResolvedWorkerOptions } from '../worker/index.js';
import type { SchedulerModuleOptions } from './interfaces/scheduler-module-options.interface.js';
import { JobHandlerRegistry } from './job-handler.registry.js';
import { NestJobInvoker } from './nest-job.invoker.js';
import { SchedulerExplorer } from './scheduler.explorer.js';
import { SCHEDULER_MODULE_OPTIONS } from './scheduler.module-definition.js';
import { SCHEDULER_NODE_TIMING, type SchedulerNodeTiming } from './scheduler-node-timing.js';
import { SCHEDULER_STORE, SCHEDULER_WORKER_OPTIONS } from './scheduler.tokens.js';

/**
 * Starts the worker when the application boots and drains it before shutdown, while the
 * DataSource is still open (TypeORM closes it later, in onApplicationShutdown).
 */
@Injectable()
export class SchedulerOrchestrator implements OnApplicationBootstrap, BeforeApplicationShutdown {
  readonly node: WorkerNode;
  /**
   * The node's OpenTelemetry spans and metrics: null when `telemetry: false` or when
   * `@opentelemetry/api` is not installed.
   */
  readonly telemetry: SchedulerTelemetry | null;
  /**
   * The one waiter behind `SchedulerClient.waitFor`: every wait of this app shares its poll, and
   * the node's own applied outcomes end a wait without waiting for one.
   */
  readonly waiter: JobWaiter;
  /** Removes the node's listeners and gauge callbacks from telemetry, at shutdown. */
  private readonly detachTelemetry: (() => void) | undefined;
  /** The scheduled verify (the `verify` option): null when off. */
  readonly scheduledVerify: ScheduledVerify | null;

  private readonly logger = new Logger('DurableScheduler');

  constructor(
    @Inject(SCHEDULER_MODULE_OPTIONS) private readonly options: SchedulerModuleOptions,
    @Inject(SCHEDULER_STORE) private readonly store: JobStore,
    @Inject(SCHEDULER_WORKER_OPTIONS) worker: ResolvedWorkerOptions,
    invoker: NestJobInvoker,
    private readonly registry: JobHandlerRegistry,
    // Never read: depending on the explorer makes Nest build it first, and it fills the registry
    // as it is built, so the node below sees every handler (it reads the batch handlers at once).
    _explorer: SchedulerExplorer,
    @Optional() @Inject(SCHEDULER_NODE_TIMING) timing?: SchedulerNodeTiming,
  ) {
    this.telemetry = SchedulerTelemetry.create(options.telemetry, { store, logger: this.logger, errorLogDetail: worker.errorLogDetail });
    // The tracing hook is the outermost, so the host's own hooks run inside the attempt's span.
    const traced = this.telemetry?.attemptHook;
    const attemptHooks = traced && options.worker !== false ? [traced, ...(options.attemptHooks ?? [])] : options.attemptHooks;
    // The node's own timing only: WorkerNode refuses keys it does not take, and the waiter's timers are the waiter's.
    const nodeTiming = { ...(timing?.clock ? { clock: timing.clock } : {}), ...(timing?.timers ? { timers: timing.timers } : {}) };
    this.node = new WorkerNode({ store, invoker, options: worker, logger: this.logger, observers: registry.observers, attemptHooks, ...nodeTiming });
    if (options.worker !== false) this.detachTelemetry = this.telemetry?.attach(this.node);
    // Under the testing kit the waiter's polls and timeouts run on the kit's clock too.
    const waiterTimers = timing?.waiterTimers ?? timing?.timers;
    const verify = checkScheduledVerifyOptions(options.verify);
    const clock = timing?.clock;
    this.scheduledVerify =
      verify === null || options.worker === false
        ? null
        : new ScheduledVerify(store, { ...verify, workerId: this.node.workerId, logger: this.logger, now: () => (clock ? clock.now() : Date.now()), ...(timing?.timers ? { timers: timing.timers } : {}) });
    this.waiter = new JobWaiter({ store, hints: allFinishHints(nodeFinishHints(this.node.events), storeFinishHints(store)), ...(waiterTimers ? { timers: waiterTimers } : {}) });
  }

  /** False on a node built with `worker: false`, which runs no jobs. */
  get runsWorker(): boolean {
    return this.options.worker !== false;
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.registerDeclaredSchedules();
    await this.applyQueueLimits();
    await this.applyRateLimits();
    if (this.options.worker === false) {
      this.logger.log('worker is false: this node enqueues and operates jobs, and runs none (no claims, heartbeats, minting, sweeps or observer delivery).');
    } else if (this.options.autoStart !== false) {
      await this.start();
    }
  }

  /** Creates or updates the schedules `@Job` handlers declare; the same on every node, so safe to race. */
  private async registerDeclaredSchedules(): Promise<void> {
    for (const job of this.registry.all()) {
      if (!job.schedule) continue;
      const { created, changed, schedule } = await this.store.scheduleUpsert({ schedule: job.schedule, actor: 'boot' });
      if (changed) this.logger.log(`${created ? 'created' : 'updated'} the schedule of ${job.name} (${schedule.id}); next tick ${schedule.nextFireAt?.toISOString() ?? 'never'}.`);
    }
  }

  /**
   * Sets the `queueLimits` option's caps. The same on every node, so safe to race: a cap already at
   * its max is left alone by the store itself, inside its write, so nodes booting together write and
   * audit it once.
   */
  private async applyQueueLimits(): Promise<void> {
    for (const [queue, max] of Object.entries(this.options.queueLimits ?? {})) {
      await this.store.concurrencyLimitSet({ target: { queue }, max, actor: 'boot' });
    }
  }

  /**
   * Sets the `rateLimits` option's rates; one already at its rate is left alone by the store, as
   * for queueLimits. One dropped from the option stays until an operator removes it, as a limit
   * set at run time would otherwise be undone by the next boot.
   */
  private async applyRateLimits(): Promise<void> {
    for (const { max, perMs, ...target } of this.options.rateLimits ?? []) {
      await this.store.rateLimitSet({ target, rate: { max, perMs }, actor: 'boot' });
    }
  }

  /** Starts claiming (a no-op when already started). For apps built with `autoStart: false`. */
  async start(): Promise<void> {
    if (this.options.worker === false) {
      throw new InvalidArgumentError('This node was built with worker: false, so it runs no worker; remove that option to run jobs here.', 'worker');
    }
    const needed = this.node.options.concurrency + 3;
    const pool = this.store.capabilities.connectionPool;
    if (pool !== undefined && pool.size < needed) {
      this.logger.warn(
        `the DataSource pool holds ${pool.size} connections but this worker can need ${needed} (concurrency ${this.node.options.concurrency} + heartbeat + LISTEN + one for claims and outcomes); raise extra.max or lower concurrency.`,
      );
    }
    await this.node.start();
    this.scheduledVerify?.start();
  }

  /** Stops claiming, waits for running attempts up to the grace period, hands back the rest. */
  async stop(): Promise<void> {
    // Side by side: a verify read under way must not hold back the worker's grace period.
    await Promise.all([this.scheduledVerify?.stop(), this.node.stop()]);
  }

  async beforeApplicationShutdown(): Promise<void> {
    // Pending waits end first (JobWaiterClosedError), so none outlives the store it reads.
    this.waiter.close();
    await this.stop();
    // Before the store closes: a collection after this must not read it.
    this.detachTelemetry?.();
    await this.store.close();
  }
}
