import type { RandomSource } from '../core/index.js';
import type { JobStore } from '../store/index.js';
import { Maintenance, type MaintenanceReport } from './maintenance.js';
import { ObserverDispatcher } from './observer-dispatcher.js';
import { MINT_BATCH, ScheduleMinter } from './schedule-minter.js';
import type { SchedulerLogger } from './scheduler-logger.js';
import { settleWithin, type Timers } from './timers.js';
import type { TransitionObserver } from './transition-observer.js';
import type { NodePartDeps, WorkerStats } from './worker-node.types.js';
import type { ResolvedWorkerOptions } from './worker-options.js';

/** What {@link NodePasses} runs on, beside what every part of the node does. */
export interface NodePassesDeps extends NodePartDeps {
  readonly random: RandomSource;
  readonly stats: WorkerStats;
  readonly observers: readonly TransitionObserver[];
}

/**
 * A node's passes beside its claims: minting recurring schedules, delivering the transition log to
 * observers, and the maintenance sweep. The node starts them once it runs and stops them when it
 * drains; a stop waits for the passes in flight, within its deadline.
 */
export class NodePasses {
  /** Mints recurring schedules while the node runs (unless `scheduling` is off). */
  readonly minter: ScheduleMinter;
  /** Delivers the transition log to observers; absent until start, and when none are registered. */
  dispatcher: ObserverDispatcher | undefined;
  private readonly store: JobStore;
  private readonly workerId: string;
  private readonly options: ResolvedWorkerOptions;
  private readonly timers: Timers;
  private readonly logger: SchedulerLogger;
  private readonly random: RandomSource;
  private readonly stats: WorkerStats;
  private readonly observers: readonly TransitionObserver[];
  private readonly maintenance: Maintenance;
  private sweeping: Promise<unknown> | undefined;
  private sweepsInFlight = 0;

  constructor(deps: NodePassesDeps) {
    this.store = deps.store;
    this.workerId = deps.workerId;
    this.options = deps.options;
    this.timers = deps.timers;
    this.logger = deps.logger;
    this.random = deps.random;
    this.stats = deps.stats;
    this.observers = deps.observers;
    this.minter = new ScheduleMinter(this.store, this.timers, this.logger, { maxIdleMs: this.options.scheduleCheckIntervalMs, batch: MINT_BATCH });
    this.maintenance = new Maintenance(this.store, this.logger, {
      retentionMs: this.options.retentionMs,
      historyPerJob: this.options.historyPerJob,
      workerId: this.workerId,
      leaseMs: this.options.maintenanceIntervalMs,
    });
  }

  /** Makes the observers' dispatcher, at start (observers registered by then count); none without observers. */
  openDispatcher(): ObserverDispatcher | undefined {
    if (this.observers.length === 0) return undefined;
    this.dispatcher = new ObserverDispatcher({
      store: this.store,
      observers: [...this.observers],
      timers: this.timers,
      logger: this.logger,
      random: this.random,
      options: {
        workerId: this.workerId,
        pollIntervalMs: this.options.observerPollIntervalMs,
        leaseMs: this.options.leaseMs,
        batchSize: 100,
        retry: this.options.observerRetry,
        errorLogDetail: this.options.errorLogDetail,
      },
    });
    return this.dispatcher;
  }

  start(): void {
    if (this.options.scheduling) this.minter.start();
    this.dispatcher?.start();
  }

  /** Runs one sweep; a timed one (`leased`) only while this node holds the sweep's lease. */
  async sweep(options: { readonly leased: boolean }): Promise<MaintenanceReport> {
    // A timed sweep never starts beside one still running on this node (a backlog, a slow server).
    if (options.leased && this.sweepsInFlight > 0) return { swept: false, expired: 0, settled: 0, purged: 0, trimmed: 0, folded: 0, prunedNodes: 0 };
    this.sweepsInFlight += 1;
    const running = this.maintenance.sweep(options).finally(() => (this.sweepsInFlight -= 1));
    this.sweeping = running;
    const report = await running;
    this.stats.sweptLeases += report.expired;
    this.stats.purgedJobs += report.purged;
    return report;
  }

  /** Starts no further pass; those in flight go on. */
  drain(): void {
    this.maintenance.stop();
    void this.minter.stop();
    void this.dispatcher?.stop();
  }

  /** Waits for the passes in flight, while `remaining()` is above zero. */
  async settle(remaining: () => number): Promise<void> {
    await settleWithin(this.dispatcher?.stop(), remaining(), this.timers);
    await settleWithin(this.minter.stop(), remaining(), this.timers);
    await settleWithin(this.sweeping, remaining(), this.timers);
  }
}
