import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { checkOptions, InvalidArgumentError, SeededRandom, showValue, type Clock } from '../core/index.js';
import { ANY_QUEUE, SystemClock, type JobStore, type WakeSubscription } from '../store/index.js';
import { assertBatchWaitFitsLease } from './batch-handler.js';
import type { JobInvoker } from './job-invoker.js';
import type { MaintenanceReport } from './maintenance.js';
import { NodeAttempts } from './node-attempts.js';
import { NodeBeats } from './node-beats.js';
import { NodeMonitor } from './node-monitor.js';
import { NodePasses } from './node-passes.js';
import { NamedTimers } from './named-timers.js';
import type { ObserverDispatcher } from './observer-dispatcher.js';
import type { ScheduleMinter } from './schedule-minter.js';
import { NodeDriver, type NodeCommand, type NodeEvent } from './node-driver.js';
import { NodeEventEmitter, type SettledEvent } from './node-events.js';
import { ProgressBoard } from './progress-board.js';
import { silentLogger, type SchedulerLogger } from './scheduler-logger.js';
import { STOP_OVERRUN_MS } from './shutdown-deadline.js';
import { deferOn, realTimers, settleWithin, type Timers } from './timers.js';
import type { NodeHealth, WorkerNodeDeps, WorkerStats } from './worker-node.types.js';
import { checkWorkerOptionKeys, resolveWorkerOptions, type ResolvedWorkerOptions } from './worker-options.js';

export type { NodeHealth, WorkerNodeDeps, WorkerStats } from './worker-node.types.js';

/** A worker id for a node that sets none: host name, process id and a random suffix. */
export function defaultWorkerId(): string {
  return `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
}

/** The keys {@link WorkerNodeDeps} has: a misspelt one (`observer`) would otherwise be dropped in silence. */
const WORKER_NODE_DEPS = ['store', 'invoker', 'options', 'logger', 'clock', 'timers', 'random', 'observers', 'attemptHooks'];

/**
 * The pump: owns the timers and the I/O and feeds the {@link NodeDriver}, which makes every
 * decision. It claims, runs attempts through the executor, writes outcomes through the completer,
 * heartbeats, listens for wake-up hints, runs the maintenance sweep, and drains on stop.
 *
 * The node itself starts, pumps and stops; its parts do the rest, one role each: `NodeAttempts`
 * (claim, run, settle), `NodeBeats` (heartbeats and the registry), `NodePasses` (minting, observers,
 * the sweep), `NodeMonitor` (counters, health, `stateChanged`) and `NamedTimers`.
 */
export class WorkerNode {
  readonly workerId: string;
  readonly options: ResolvedWorkerOptions;
  readonly stats: WorkerStats;
  /**
   * The node's typed events ({@link WorkerNodeEvents}): `attemptStarted`, `settled` (applied, stale
   * or dropped), `leaseLost`, `claimFailed` and `stateChanged`. For metrics and logs in a host
   * without OpenTelemetry, and for tests. No payload, output or secret travels in them.
   */
  readonly events: NodeEventEmitter;
  private readonly driver: NodeDriver;
  private readonly store: JobStore;
  private readonly logger: SchedulerLogger;
  private readonly clock: Clock;
  private readonly timers: Timers;
  private readonly named: NamedTimers;
  private readonly monitor: NodeMonitor;
  private readonly attempts: NodeAttempts;
  private readonly beats: NodeBeats;
  private readonly passes: NodePasses;
  /** Mints recurring schedules while the node runs (unless `scheduling` is off). */
  readonly minter: ScheduleMinter;
  /** Delivers the transition log to observers; absent until start, and when none are registered. */
  dispatcher: ObserverDispatcher | undefined;
  private subscription: WakeSubscription | undefined;
  private starting: Promise<void> | undefined;
  /** True while start is awaiting the store (observer registration, the hint subscription). */
  private beginning = false;
  private stopped: Promise<void> | undefined;
  private resolveStopped: (() => void) | undefined;
  /** When stop gives up waiting, by the node's clock (see {@link STOP_OVERRUN_MS}). */
  private stopDeadlineAt = Number.POSITIVE_INFINITY;
  private finished = false;
  /** When the snooze wake-up armed now fires, by the node's clock (see {@link wakeAfterSnooze}). */
  private snoozeWakeAt = Number.POSITIVE_INFINITY;

  constructor(deps: WorkerNodeDeps) {
    checkOptions(deps ?? null, WORKER_NODE_DEPS, { what: 'WorkerNode', argument: 'WorkerNode deps' });
    this.options = resolveWorkerOptions(checkWorkerOptionKeys(deps.options));
    this.workerId = this.options.workerId ?? defaultWorkerId();
    this.store = deps.store;
    this.logger = deps.logger ?? silentLogger;
    this.events = new NodeEventEmitter(this.logger);
    this.clock = deps.clock ?? new SystemClock();
    this.timers = deps.timers ?? realTimers;
    this.named = new NamedTimers(this.timers);
    this.monitor = new NodeMonitor(this.clock, this.events);
    this.stats = this.monitor.stats;
    const progress = new ProgressBoard(this.logger);
    const random = deps.random ?? new SeededRandom(BigInt(`0x${randomBytes(8).toString('hex')}`));
    this.driver = new NodeDriver({
      concurrency: this.options.concurrency,
      claimBatchSize: this.options.claimBatchSize,
      leaseMs: this.options.leaseMs,
      claimAhead: this.options.claimAhead,
      claimAheadMs: this.options.claimAheadMs,
      batchAhead: batchAhead(deps.invoker, this.options.leaseMs),
    });
    const parts = {
      store: this.store,
      workerId: this.workerId,
      options: this.options,
      clock: this.clock,
      timers: this.timers,
      logger: this.logger,
      progress,
      emit: (event: NodeEvent) => this.emit(event),
      contact: () => this.monitor.contact(),
    };
    this.attempts = new NodeAttempts({
      ...parts,
      invoker: deps.invoker,
      driver: this.driver,
      random,
      events: this.events,
      stats: this.stats,
      attemptHooks: deps.attemptHooks,
      snoozed: (delayMs) => this.wakeAfterSnooze(delayMs),
    });
    this.beats = new NodeBeats(parts);
    this.passes = new NodePasses({ ...parts, random, stats: this.stats, observers: deps.observers ?? [] });
    this.minter = this.passes.minter;
  }

  /**
   * A snooze shorter than the poll interval would wait for the next poll, up to a whole interval
   * past its end: the node that wrote it wakes itself when it ends instead. One timer, for the
   * earliest such end; a later snooze, another node's, and a longer one wait for a poll, as a
   * retry does.
   */
  private wakeAfterSnooze(delayMs: number): void {
    if (delayMs >= this.options.pollIntervalMs || this.driver.status !== 'running') return;
    const at = this.clock.now() + delayMs;
    if (at >= this.snoozeWakeAt) return;
    this.snoozeWakeAt = at;
    this.named.cancel('snooze');
    this.named.once('snooze', delayMs, () => {
      this.snoozeWakeAt = Number.POSITIVE_INFINITY;
      this.emit({ type: 'wake', now: this.clock.now() });
    });
  }

  /** The driver's state: idle, running, draining, relinquishing or stopped. */
  get status() {
    // A stop that gave up at its deadline is over, whatever the driver still waits for.
    return this.finished ? 'stopped' : this.driver.status;
  }

  /** What a health check needs: the state, the last contact with the store, and the wake-up channel. */
  health(): NodeHealth {
    return this.monitor.health(this.status, this.subscription?.connection, this.inFlight);
  }

  /** Attempts this node is running or reporting right now. */
  get inFlight(): number {
    return this.driver.heldCount;
  }

  /** Starts the node. Calling it again (or while it starts) changes nothing. */
  start(): Promise<void> {
    this.starting ??= this.begin();
    return this.starting;
  }

  private async begin(): Promise<void> {
    if (this.driver.status !== 'idle' || this.stopped) return;
    this.beginning = true;
    try {
      await this.open();
    } finally {
      this.beginning = false;
    }
  }

  /** Start's awaits. A stop that arrives during one of them is honoured at the next step. */
  private async open(): Promise<void> {
    const queues = new Set(this.options.queues);
    this.dispatcher = this.passes.openDispatcher();
    if (this.dispatcher) {
      // Before the first claim: an outcome this node writes must land after the observer's cursor.
      await this.dispatcher.register();
      if (this.stopped) return;
    }
    const subscription = await this.store.subscribeWakeHints({
      listener: (queue) => {
        if (queue === ANY_QUEUE || queues.has(queue)) this.emit({ type: 'wake', now: this.clock.now() });
      },
    });
    if (this.stopped) {
      // Stop may already have finished (it stops waiting at its deadline); this subscription is ours to close.
      await subscription.close().catch(() => undefined);
      return;
    }
    this.subscription = subscription;
    this.monitor.started();
    this.emit({ type: 'start', now: this.clock.now() });
    this.emit({ type: 'beat_due', now: this.clock.now() });
    this.named.every('poll', this.options.pollIntervalMs, () => this.emit({ type: 'poll', now: this.clock.now() }));
    // The registry beat rides on the heartbeat's timer, as a statement of its own (see NodeBeats).
    this.named.every('heartbeat', this.options.heartbeatIntervalMs, () => {
      this.emit({ type: 'heartbeat_due', now: this.clock.now() });
      this.emit({ type: 'beat_due', now: this.clock.now() });
    });
    this.named.every('maintenance', this.options.maintenanceIntervalMs, () => void this.passes.sweep({ leased: true }));
    this.passes.start();
    this.logger.log(`worker ${this.workerId} started on ${this.options.queues.join(', ')} with concurrency ${this.options.concurrency}.`);
  }

  /**
   * Stops claiming, waits up to the grace period for running attempts, then aborts the rest and
   * hands their leases back. Resolves once nothing is left in flight, and in any case within
   * `shutdownGraceMs` + {@link STOP_OVERRUN_MS}: what is still in flight then is given up (its
   * leases lapse). A stop during start makes start give up at its next step.
   */
  stop(): Promise<void> {
    if (this.stopped) return this.stopped;
    this.stopped = new Promise<void>((resolve) => (this.resolveStopped = resolve));
    const limitMs = this.options.shutdownGraceMs + STOP_OVERRUN_MS;
    this.stopDeadlineAt = this.clock.now() + limitMs;
    this.named.once('deadline', limitMs, () => this.giveUp());
    if (this.beginning) {
      // The drain starts once start has given up; the deadline above bounds that wait too.
      const drain = () => this.drain();
      this.starting!.then(drain, drain);
    } else {
      this.drain();
    }
    return this.stopped;
  }

  private drain(): void {
    if (this.finished) return;
    this.named.cancel('poll');
    this.named.cancel('maintenance');
    this.passes.drain();
    this.emit({ type: 'drain', now: this.clock.now() });
    if (this.driver.status !== 'stopped') {
      this.named.once('grace', this.options.shutdownGraceMs, () => this.emit({ type: 'grace_expired', now: this.clock.now() }));
    }
  }

  /**
   * Runs one maintenance sweep now, whoever holds the sweep's lease: lapsed leases, dependency edges
   * left to settle, retention and the history bound. On its own timer a node sweeps only while it
   * holds that lease, so one node of a cluster sweeps per interval.
   */
  sweep(): Promise<MaintenanceReport> {
    return this.passes.sweep({ leased: false });
  }

  private emit(event: NodeEvent): void {
    this.dispatch(this.driver.step(event));
    this.monitor.announce(this.status);
  }

  private dispatch(commands: readonly NodeCommand[]): void {
    for (const command of commands) {
      switch (command.type) {
        case 'claim':
          // Sent once the attempts settling right now have settled, so they share one claim.
          deferOn(this.timers, () => void this.attempts.claim(command.lapsed));
          break;
        case 'execute':
          void this.attempts.execute(command.jobId);
          break;
        case 'execute_batch':
          void this.attempts.executeBatch(command.jobs);
          break;
        case 'batch_timer':
          this.named.cancel('batch');
          this.named.once('batch', Math.max(0, command.at - this.clock.now()), () => this.emit({ type: 'batch_due', now: this.clock.now() }));
          break;
        case 'heartbeat':
          void this.beats.heartbeat(command.leases);
          break;
        case 'abort':
          this.attempts.abort(command);
          break;
        case 'relinquish':
          void this.attempts.relinquish(command.leases);
          break;
        case 'discard':
          this.attempts.discard(command);
          break;
        case 'beat':
          this.beats.beat(command.running);
          break;
        case 'stopped':
          void this.finishStop();
          break;
      }
    }
  }

  /**
   * Looks for due work now, as the poll timer does when it fires: a claim pass (and a search for
   * lapsed leases) if the node runs and has free slots. For tests that drive a node on their own
   * timers, such as the testing kit's `drain()`; a running node never needs it.
   */
  poll(): void {
    this.emit({ type: 'poll', now: this.clock.now() });
  }

  /**
   * Starts every batch the node holds now, full or not, instead of waiting out `batch.waitMs`. For
   * tests that drive a node on their own timers, such as the testing kit's `drain()`.
   */
  flushBatches(): void {
    this.emit({ type: 'batch_due', now: this.clock.now(), flush: true });
  }

  /** Resolves with the next settled attempt of `jobId` that matches `filter`. */
  settledOnce(jobId: string, filter: (event: SettledEvent) => boolean = () => true): Promise<SettledEvent> {
    return new Promise((resolve) => {
      const listener = (event: SettledEvent) => {
        if (event.jobId !== jobId || !filter(event)) return;
        this.events.off('settled', listener);
        resolve(event);
      };
      this.events.on('settled', listener);
    });
  }

  /** The stop deadline passed with work still in flight: stop anyway, saying what is left behind. */
  private giveUp(): void {
    if (this.finished) return;
    const pending = [
      this.driver.heldCount > 0 ? `${this.driver.heldCount} lease(s) still running or being recorded` : '',
      this.beginning ? 'a start still waiting on the store' : '',
    ].filter(Boolean);
    this.logger.warn(
      `stopping worker ${this.workerId} without waiting any longer (${pending.join(', ') || 'a store call still in flight'}); leases not handed back will lapse.`,
    );
    void this.finishStop();
  }

  private async finishStop(): Promise<void> {
    if (this.finished) return;
    this.finished = true;
    this.monitor.announce(this.status);
    this.named.cancelAll();
    this.attempts.close();
    // Passes in flight finish with the store still open, but never past the stop deadline.
    const remaining = () => this.stopDeadlineAt - this.clock.now();
    await this.passes.settle(remaining);
    await settleWithin(this.subscription?.close(), remaining(), this.timers);
    this.subscription = undefined;
    await this.beats.recordStop(remaining);
    this.logger.log(`worker ${this.workerId} stopped.`);
    this.resolveStopped?.();
  }
}

/**
 * The largest batch among the invoker's batch handlers, which the local queue must have room for;
 * each handler's wait is checked against the lease first, and one without `invokeBatch` refused.
 */
function batchAhead(invoker: JobInvoker, leaseMs: number): number {
  let most = 0;
  for (const [name, batch] of invoker.batchHandlers?.() ?? []) {
    if (typeof invoker.invokeBatch !== 'function') throw new InvalidArgumentError(`the handler of ${showValue(name)} takes batches, but this node's invoker has no invokeBatch to call it with.`, 'batch');
    assertBatchWaitFitsLease(name, batch, leaseMs);
    most = Math.max(most, batch.size);
  }
  return most;
}
