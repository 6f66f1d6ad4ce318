import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { SeededRandom, type Clock, type JobRecord, type RandomSource } from '../core/index.js';
import { ANY_QUEUE, SystemClock, type JobStore, type LeaseRef, type Outcome, type OutcomeResult, type WakeSubscription } from '../store/index.js';
import { AttemptAbort } from './attempt-abort.js';
import { checkAttemptHooks, type AttemptHook } from './attempt-hook.js';
import { AttemptExecutor, describe, type AttemptReport } from './attempt-executor.js';
import { describeError } from './log-text.js';
import { Completer } from './completer.js';
import { Maintenance, type MaintenanceReport } from './maintenance.js';
import { ObserverDispatcher } from './observer-dispatcher.js';
import { MINT_BATCH, ScheduleMinter } from './schedule-minter.js';
import type { TransitionObserver } from './transition-observer.js';
import type { JobInvoker } from './job-invoker.js';
import { NodeDriver, type NodeCommand, type NodeEvent, type NodeState } from './node-driver.js';
import { NodeEventEmitter, type SettledEvent } from './node-events.js';
import { packageVersion } from './package-version.js';
import { ProgressBoard } from './progress-board.js';
import { jobLogFields, silentLogger, type SchedulerLogger } from './scheduler-logger.js';
import { STOP_OVERRUN_MS } from './shutdown-deadline.js';
import { deferOn, realTimers, settleWithin, type Timers } from './timers.js';
import { resolveWorkerOptions, type ResolvedWorkerOptions, type WorkerOptions } from './worker-options.js';

/** What a {@link WorkerNode} is built from. Only the store and the invoker are required. */
export interface WorkerNodeDeps {
  readonly store: JobStore;
  readonly invoker: JobInvoker;
  /** How the node runs; options that {@link resolveWorkerOptions} returned are used as they are. */
  readonly options?: WorkerOptions | ResolvedWorkerOptions;
  readonly logger?: SchedulerLogger;
  /** The node's own clock, for timers and self-fencing; the store keeps its own for leases. */
  readonly clock?: Clock;
  readonly timers?: Timers;
  readonly random?: RandomSource;
  /**
   * Transition observers this node delivers to, read when the node starts (so a list filled in
   * later, as Nest discovery does, counts). With none, no dispatcher runs at all.
   */
  readonly observers?: readonly TransitionObserver[];
  /**
   * Wrapped around each handler invocation, the first outermost: tracing, metrics, context
   * propagation (see {@link AttemptHook}). With none, attempts run exactly as they would without.
   */
  readonly attemptHooks?: readonly AttemptHook[];
}

/** Counters a node keeps, for logs, metrics and tests. */
export interface WorkerStats {
  claimed: number;
  succeeded: number;
  failed: number;
  deadLettered: number;
  quarantined: number;
  cancelled: number;
  /** Outcomes the fenced write refused because the lease was no longer this node's. */
  staleOutcomes: number;
  /** Outcomes not sent because the node already knew its lease was gone. */
  forfeitedOutcomes: number;
  leasesLost: number;
  relinquished: number;
  sweptLeases: number;
  /** Finished jobs this node deleted under the retention setting. */
  purgedJobs: number;
}

/** What a health check reads of a node ({@link WorkerNode.health}). */
export interface NodeHealth {
  readonly status: NodeState;
  /**
   * The last time a claim, a heartbeat or a registry beat of this node reached the store, by the
   * node's clock; null before the first. An idle node claims on every poll and a busy one
   * heartbeats, so on a working node this is never older than the longer of the two intervals.
   */
  readonly lastContactAt: Date | null;
  /** When the node started claiming, by its clock; null before. */
  readonly startedAt: Date | null;
  /**
   * The wake-up channel: `connected`; `connecting` before it was first up; `disconnected` once it
   * was lost, while it reconnects (polling still runs); `none` when the store needs no connection.
   */
  readonly wakeListener: 'connected' | 'connecting' | 'disconnected' | 'none';
  /** Attempts running or being recorded. */
  readonly inFlight: number;
}

/** A worker id for a node that sets none: host name, process id and a random suffix. */
export function defaultWorkerId(): string {
  return `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
}

/**
 * The pump: owns the timers and the I/O and feeds the {@link NodeDriver}, which makes every
 * decision. It claims, runs attempts through the executor, writes outcomes through the completer,
 * heartbeats, listens for wake-up hints, runs the maintenance sweep, and drains on stop.
 */
export class WorkerNode {
  readonly workerId: string;
  readonly options: ResolvedWorkerOptions;
  readonly stats: WorkerStats = {
    claimed: 0,
    succeeded: 0,
    failed: 0,
    deadLettered: 0,
    quarantined: 0,
    cancelled: 0,
    staleOutcomes: 0,
    forfeitedOutcomes: 0,
    leasesLost: 0,
    relinquished: 0,
    sweptLeases: 0,
    purgedJobs: 0,
  };
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
  private readonly executor: AttemptExecutor;
  private readonly completer: Completer;
  /** Progress reported by running attempts, waiting to ride on the next heartbeat. */
  private readonly progress: ProgressBoard;
  /** Mints recurring schedules while the node runs (unless `scheduling` is off). */
  readonly minter: ScheduleMinter;
  /** Delivers the transition log to observers; absent until start, and when none are registered. */
  dispatcher: ObserverDispatcher | undefined;
  private readonly maintenance: Maintenance;
  private readonly observers: readonly TransitionObserver[];
  private readonly random: RandomSource;
  private readonly jobs = new Map<string, JobRecord>();
  private readonly aborts = new Map<string, AttemptAbort>();
  private readonly timerHandles = new Map<string, unknown>();
  private subscription: WakeSubscription | undefined;
  private starting: Promise<void> | undefined;
  /** True while start is awaiting the store (observer registration, the hint subscription). */
  private beginning = false;
  private stopped: Promise<void> | undefined;
  private resolveStopped: (() => void) | undefined;
  /** When stop gives up waiting, by the node's clock (see {@link STOP_OVERRUN_MS}). */
  private stopDeadlineAt = Number.POSITIVE_INFINITY;
  private finished = false;
  private sweeping: Promise<unknown> | undefined;
  private sweepsInFlight = 0;
  /** The registry beat in flight, if any; the stop waits for it before recording the stop. */
  private beating: Promise<void> | undefined;
  /** A beat was sent at some point: this node has a registry row whose stop is worth recording. */
  private registered = false;
  /** The last beat failed: the next failure is logged at debug, so a store without the registry warns once, not every interval. */
  private beatFailing = false;
  private readonly host = hostname();
  /**
   * What `settled` tells of each attempt this node started: its name and queue, and when it started
   * and ended by the node's clock. Keyed by job and attempt (this node may reclaim a job whose
   * earlier attempt it still runs), and removed only when that attempt settles, however it ends.
   */
  private readonly attempts = new Map<string, { readonly name: string; readonly queue: string; readonly startedAt: number; endedAt?: number; errorType?: string }>();
  /** See {@link NodeHealth.lastContactAt}. */
  private lastContactAt: number | null = null;
  private startedAt: number | null = null;
  /** The state last announced by `stateChanged`. */
  private announced: NodeState = 'idle';

  constructor(deps: WorkerNodeDeps) {
    this.options = resolveWorkerOptions(deps.options);
    this.workerId = this.options.workerId ?? defaultWorkerId();
    this.store = deps.store;
    this.logger = deps.logger ?? silentLogger;
    this.events = new NodeEventEmitter(this.logger);
    this.clock = deps.clock ?? new SystemClock();
    this.timers = deps.timers ?? realTimers;
    this.progress = new ProgressBoard(this.logger);
    const random = deps.random ?? new SeededRandom(BigInt(`0x${randomBytes(8).toString('hex')}`));
    this.driver = new NodeDriver({ concurrency: this.options.concurrency, claimBatchSize: this.options.claimBatchSize, leaseMs: this.options.leaseMs });
    this.executor = new AttemptExecutor({
      store: this.store,
      invoker: deps.invoker,
      workerId: this.workerId,
      random,
      logger: this.logger,
      timers: this.timers,
      errorLogDetail: this.options.errorLogDetail,
      hooks: checkAttemptHooks(deps.attemptHooks),
      progress: {
        board: this.progress,
        send: (lease) => this.store.jobHeartbeat({ workerId: this.workerId, leases: [lease], leaseMs: this.options.leaseMs }),
      },
    });
    this.completer = new Completer({
      store: this.store,
      workerId: this.workerId,
      logger: this.logger,
      timers: this.timers,
      stillHeld: (jobId, attempt) => this.driver.mayReport(jobId, attempt),
      onSettled: (outcome, result) => this.settled(outcome, result),
      errorLogDetail: this.options.errorLogDetail,
    });
    this.minter = new ScheduleMinter(this.store, this.timers, this.logger, { maxIdleMs: this.options.scheduleCheckIntervalMs, batch: MINT_BATCH });
    this.maintenance = new Maintenance(this.store, this.logger, {
      retentionMs: this.options.retentionMs,
      historyPerJob: this.options.historyPerJob,
      workerId: this.workerId,
      leaseMs: this.options.maintenanceIntervalMs,
    });
    this.observers = deps.observers ?? [];
    this.random = random;
  }

  /** The driver's state: idle, running, draining, relinquishing or stopped. */
  get status() {
    // A stop that gave up at its deadline is over, whatever the driver still waits for.
    return this.finished ? 'stopped' : this.driver.status;
  }

  /** What a health check needs: the state, the last contact with the store, and the wake-up channel. */
  health(): NodeHealth {
    const connection = this.subscription?.connection;
    return {
      status: this.status,
      lastContactAt: this.lastContactAt === null ? null : new Date(this.lastContactAt),
      startedAt: this.startedAt === null ? null : new Date(this.startedAt),
      wakeListener: connection === undefined ? 'none' : connection === 'lost' ? 'disconnected' : connection,
      inFlight: this.inFlight,
    };
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
    if (this.observers.length > 0) {
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
    this.startedAt = this.clock.now();
    this.emit({ type: 'start', now: this.clock.now() });
    this.emit({ type: 'beat_due', now: this.clock.now() });
    this.every('poll', this.options.pollIntervalMs, () => this.emit({ type: 'poll', now: this.clock.now() }));
    // The registry beat rides on the heartbeat's timer, as a statement of its own (see beat()).
    this.every('heartbeat', this.options.heartbeatIntervalMs, () => {
      this.emit({ type: 'heartbeat_due', now: this.clock.now() });
      this.emit({ type: 'beat_due', now: this.clock.now() });
    });
    this.every('maintenance', this.options.maintenanceIntervalMs, () => void this.runSweep({ leased: true }));
    if (this.options.scheduling) this.minter.start();
    this.dispatcher?.start();
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
    this.timerHandles.set('deadline', this.timers.setTimeout(() => this.giveUp(), limitMs));
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
    this.cancelTimer('poll');
    this.cancelTimer('maintenance');
    this.maintenance.stop();
    void this.minter.stop();
    void this.dispatcher?.stop();
    this.emit({ type: 'drain', now: this.clock.now() });
    if (this.driver.status !== 'stopped') {
      this.timerHandles.set(
        'grace',
        this.timers.setTimeout(() => this.emit({ type: 'grace_expired', now: this.clock.now() }), this.options.shutdownGraceMs),
      );
    }
  }

  /**
   * Runs one maintenance sweep now, whoever holds the sweep's lease: lapsed leases, dependency edges
   * left to settle, retention and the history bound. On its own timer a node sweeps only while it
   * holds that lease, so one node of a cluster sweeps per interval.
   */
  sweep(): Promise<MaintenanceReport> {
    return this.runSweep({ leased: false });
  }

  private async runSweep(options: { readonly leased: boolean }): Promise<MaintenanceReport> {
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

  private emit(event: NodeEvent): void {
    this.dispatch(this.driver.step(event));
    this.announceState();
  }

  /** Emits `stateChanged` when the node's state differs from the one last announced. */
  private announceState(): void {
    const to = this.status;
    if (to === this.announced) return;
    const from = this.announced;
    this.announced = to;
    this.events.publish('stateChanged', { from, to });
  }

  private dispatch(commands: readonly NodeCommand[]): void {
    for (const command of commands) {
      switch (command.type) {
        case 'claim':
          // Sent once the attempts settling right now have settled, so they share one claim.
          deferOn(this.timers, () => void this.claim(command.limit, command.lapsed));
          break;
        case 'execute':
          void this.execute(command.jobId);
          break;
        case 'heartbeat':
          void this.heartbeat(command.leases);
          break;
        case 'abort': {
          if (command.reason === 'lease_lost' || command.reason === 'lease_expired') {
            this.stats.leasesLost += 1;
            this.logger.warn(`lost the lease of ${command.jobId} attempt ${command.attempt} (${command.reason}); aborting the attempt.`, { jobId: command.jobId, attempt: command.attempt });
            this.events.publish('leaseLost', { jobId: command.jobId, attempt: command.attempt, reason: command.reason });
          }
          this.aborts.get(command.jobId)?.abort(command.reason);
          break;
        }
        case 'relinquish':
          void this.relinquish(command.leases);
          break;
        case 'beat':
          this.beating = this.beat(command.running);
          break;
        case 'stopped':
          void this.finishStop();
          break;
      }
    }
  }

  private async claim(asked: number, lapsed: boolean): Promise<void> {
    const sentAt = this.clock.now();
    // Sized now, not when asked: slots freed since then count. None means shutdown began before
    // the claim went out, and it claims nothing rather than hand jobs straight back.
    const limit = this.driver.claimLimit();
    if (limit === 0) {
      this.emit({ type: 'claimed', now: sentAt, sentAt, limit: asked, jobs: [] });
      return;
    }
    try {
      const jobs = await this.store.jobClaim({ workerId: this.workerId, limit, queues: this.options.queues, leaseMs: this.options.leaseMs, includeLapsed: lapsed });
      for (const job of jobs) this.jobs.set(job.id, job);
      this.stats.claimed += jobs.length;
      this.lastContactAt = this.clock.now();
      this.emit({ type: 'claimed', now: this.clock.now(), sentAt, limit, jobs: jobs.map((job) => ({ jobId: job.id, attempt: job.attempt })) });
    } catch (error) {
      this.logger.warn(`claim failed (${describe(error)}); polling will try again.`);
      this.events.publish('claimFailed', { error: describe(error) });
      this.emit({ type: 'claim_failed', now: this.clock.now(), lapsed });
    }
  }

  private async execute(jobId: string): Promise<void> {
    const job = this.jobs.get(jobId);
    if (!job) return;
    const abort = new AttemptAbort();
    this.aborts.set(jobId, abort);
    const startedAt = this.clock.now();
    const attempt = { name: job.name, queue: job.queue, startedAt } as { name: string; queue: string; startedAt: number; endedAt?: number; errorType?: string };
    this.attempts.set(`${jobId}:${job.attempt}`, attempt);
    const runAt = job.runAt.getTime();
    this.events.publish('attemptStarted', {
      jobId,
      name: job.name,
      queue: job.queue,
      attempt: job.attempt,
      maxAttempts: job.maxAttempts,
      workerId: this.workerId,
      runAt: job.runAt,
      startedAt: new Date(startedAt),
      waitMs: Math.max(0, startedAt - runAt),
    });
    let attemptReport: AttemptReport;
    try {
      attemptReport = await this.executor.execute(job, abort);
    } catch (error) {
      // The outcome write inside the attempt transaction failed; the lease will lapse and the job runs again.
      this.logger.warn(`recording ${job.name} ${job.id} attempt ${job.attempt} failed (${describeError(error, this.options.errorLogDetail)}).`, jobLogFields(job));
      attempt.endedAt = this.clock.now();
      this.aborts.delete(jobId);
      this.emit({ type: 'attempt_settled', now: this.clock.now(), jobId, attempt: job.attempt });
      this.settled({ jobId, attempt: job.attempt, kind: 'succeeded' }, 'dropped');
      return;
    }
    attempt.endedAt = this.clock.now();
    if (attemptReport.kind === 'report' && attemptReport.errorType !== undefined) attempt.errorType = attemptReport.errorType;
    this.aborts.delete(jobId);
    this.emit({ type: 'attempt_settled', now: this.clock.now(), jobId, attempt: job.attempt });
    if (attemptReport.kind === 'recorded') this.settled(attemptReport.outcome, attemptReport.result);
    else this.completer.submit(attemptReport.outcome);
  }

  private settled(outcome: Outcome, result: OutcomeResult | 'dropped'): void {
    const job = this.jobs.get(outcome.jobId);
    const key = `${outcome.jobId}:${outcome.attempt}`;
    const attempt = this.attempts.get(key);
    this.attempts.delete(key);
    if (job?.attempt === outcome.attempt) this.jobs.delete(outcome.jobId);
    if (result === 'dropped') this.stats.forfeitedOutcomes += 1;
    else if (result.status === 'stale') this.stats.staleOutcomes += 1;
    else if (result.state === 'succeeded') this.stats.succeeded += 1;
    else if (result.state === 'scheduled') this.stats.failed += 1;
    else if (result.state === 'dead_lettered') this.stats.deadLettered += 1;
    else if (result.state === 'quarantined') this.stats.quarantined += 1;
    else if (result.state === 'cancelled') this.stats.cancelled += 1;
    const base = {
      jobId: outcome.jobId,
      attempt: outcome.attempt,
      name: attempt?.name ?? job?.name ?? '',
      queue: attempt?.queue ?? job?.queue ?? '',
      kind: outcome.kind,
      durationMs: attempt === undefined ? 0 : Math.max(0, (attempt.endedAt ?? this.clock.now()) - attempt.startedAt),
      ...(attempt?.errorType === undefined ? {} : { errorType: attempt.errorType }),
    };
    const event: SettledEvent =
      result === 'dropped' ? { ...base, status: 'dropped' } : { ...base, status: result.status, state: result.status === 'applied' ? result.state : undefined };
    // Before the driver's step, which may stop the node: an attempt settles before `stateChanged` to stopped.
    this.events.publish('settled', event);
    this.emit({ type: 'outcome_recorded', now: this.clock.now(), jobId: outcome.jobId, attempt: outcome.attempt });
  }

  /**
   * Looks for due work now, as the poll timer does when it fires: a claim pass (and a search for
   * lapsed leases) if the node runs and has free slots. For tests that drive a node on their own
   * timers, such as the testing kit's `drain()`; a running node never needs it.
   */
  poll(): void {
    this.emit({ type: 'poll', now: this.clock.now() });
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

  private async heartbeat(held: readonly LeaseRef[]): Promise<void> {
    const sentAt = this.clock.now();
    // Pending progress rides on the renewal's own statement; without any, the leases go as they are.
    const leases = this.progress.attach(held);
    try {
      const result = await this.store.jobHeartbeat({ workerId: this.workerId, leases, leaseMs: this.options.leaseMs });
      this.progress.settle(leases, result);
      this.lastContactAt = this.clock.now();
      this.emit({ type: 'heartbeat_done', now: this.clock.now(), sentAt, renewed: result.renewed, lost: result.lost });
    } catch (error) {
      this.progress.settle(leases, undefined);
      this.logger.warn(`heartbeat failed (${describe(error)}); leases are kept until they would lapse.`);
      this.emit({ type: 'heartbeat_failed', now: this.clock.now() });
    }
  }

  /**
   * Writes this node's registry row. A statement of its own rather than a step of the heartbeat's:
   * an idle node sends no heartbeat but must still beat, and a beat that fails (a lock, a store not
   * migrated yet) must never fail a lease renewal. Its failure is logged, never thrown; leases,
   * claims and outcomes go on as they were.
   */
  private async beat(running: number): Promise<void> {
    this.registered = true;
    const { queues, concurrency } = this.options;
    try {
      await this.store.nodeBeat({ id: this.workerId, host: this.host, pid: process.pid, version: packageVersion(), queues, concurrency, running });
      this.beatFailing = false;
      this.lastContactAt = this.clock.now();
      this.emit({ type: 'beat_done', now: this.clock.now() });
    } catch (error) {
      const line = `registry beat failed (${describe(error)}); the node's row is written again at the next heartbeat interval, and leases are not affected.`;
      if (this.beatFailing) this.logger.debug?.(line);
      else this.logger.warn(line);
      this.beatFailing = true;
      this.emit({ type: 'beat_failed', now: this.clock.now() });
    }
  }

  /** Marks this node stopped in the registry, once the beat in flight (if any) has landed, so no beat overtakes it. */
  private async recordStop(remaining: () => number): Promise<void> {
    if (!this.registered) return;
    await settleWithin(this.beating, remaining(), this.timers);
    if (remaining() <= 0) return;
    const stop = this.store.nodeStop({ id: this.workerId }).catch((error: unknown) => {
      const line = `recording the stop in the node registry failed (${describe(error)}); the row ages out like a crashed node's.`;
      // Beats already failing were warned about once; the stop failing with them says nothing new.
      if (this.beatFailing) this.logger.debug?.(line);
      else this.logger.warn(line);
    });
    await settleWithin(stop, remaining(), this.timers);
  }

  private async relinquish(leases: readonly LeaseRef[]): Promise<void> {
    try {
      const results = await this.store.jobRelinquishMany({ workerId: this.workerId, leases });
      this.stats.relinquished += results.filter((r) => r.status === 'applied').length;
      this.logger.log(`handed back ${results.filter((r) => r.status === 'applied').length} unfinished attempt(s) on shutdown.`);
    } catch (error) {
      this.logger.warn(`handing back ${leases.length} lease(s) failed (${describe(error)}); they will lapse instead.`);
    }
    for (const { jobId } of leases) this.jobs.delete(jobId);
    this.emit({ type: 'relinquish_done', now: this.clock.now(), leases });
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
    this.announceState();
    for (const name of [...this.timerHandles.keys()]) this.cancelTimer(name);
    this.completer.close();
    // Passes in flight finish with the store still open, but never past the stop deadline.
    const remaining = () => this.stopDeadlineAt - this.clock.now();
    await settleWithin(this.dispatcher?.stop(), remaining(), this.timers);
    await settleWithin(this.minter.stop(), remaining(), this.timers);
    await settleWithin(this.sweeping, remaining(), this.timers);
    await settleWithin(this.subscription?.close(), remaining(), this.timers);
    this.subscription = undefined;
    await this.recordStop(remaining);
    this.logger.log(`worker ${this.workerId} stopped.`);
    this.resolveStopped?.();
  }

  private every(name: string, intervalMs: number, tick: () => void): void {
    const schedule = () => {
      this.timerHandles.set(
        name,
        this.timers.setTimeout(() => {
          if (!this.timerHandles.has(name)) return;
          tick();
          if (this.timerHandles.has(name)) schedule();
        }, intervalMs),
      );
    };
    schedule();
  }

  private cancelTimer(name: string): void {
    const handle = this.timerHandles.get(name);
    if (handle === undefined) return;
    this.timers.clearTimeout(handle);
    this.timerHandles.delete(name);
  }
}
