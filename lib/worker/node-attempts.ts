import type { Clock, JobRecord, RandomSource } from '../core/index.js';
import type { CompleteAndClaimResult, JobStore, LeaseRef, Outcome, OutcomeResult } from '../store/index.js';
import { AttemptAbort } from './attempt-abort.js';
import { checkAttemptHooks, type AttemptHook } from './attempt-hook.js';
import { AttemptExecutor, describe, type AttemptReport } from './attempt-executor.js';
import { BatchExecutor, BatchRun } from './batch-executor.js';
import type { ResolvedBatchOptions } from './batch-handler.js';
import { describeError } from './log-text.js';
import { Completer } from './completer.js';
import type { JobInvoker } from './job-invoker.js';
import type { ClaimedLease, NodeCommand, NodeDriver, NodeEvent } from './node-driver.js';
import type { NodeEventEmitter, SettledEvent } from './node-events.js';
import { jobLogFields, type SchedulerLogger } from './scheduler-logger.js';
import type { NodePartDeps, WorkerStats } from './worker-node.types.js';
import type { ResolvedWorkerOptions } from './worker-options.js';

/** What {@link NodeAttempts} works with, beside what every part of the node does. */
export interface NodeAttemptsDeps extends NodePartDeps {
  readonly invoker: JobInvoker;
  readonly driver: NodeDriver;
  readonly random: RandomSource;
  readonly events: NodeEventEmitter;
  readonly stats: WorkerStats;
  readonly attemptHooks: readonly AttemptHook[] | undefined;
  /** A snooze of this node's was written: its job is due again after `delayMs`. */
  readonly snoozed?: (delayMs: number) => void;
}

/**
 * A node's attempts, from claim to settled: it claims what the driver asks for, runs each attempt
 * through the executor, writes outcomes through the completer, and counts and announces how each
 * one settled. On shutdown it aborts attempts and hands leases back as the driver decides.
 */
export class NodeAttempts {
  private readonly store: JobStore;
  private readonly workerId: string;
  private readonly options: ResolvedWorkerOptions;
  private readonly driver: NodeDriver;
  private readonly clock: Clock;
  private readonly logger: SchedulerLogger;
  private readonly events: NodeEventEmitter;
  private readonly stats: WorkerStats;
  private readonly emit: (event: NodeEvent) => void;
  private readonly contact: () => void;
  private readonly executor: AttemptExecutor;
  private readonly batches: BatchExecutor;
  private readonly invoker: JobInvoker;
  private readonly batchHandlers: ReadonlyMap<string, ResolvedBatchOptions>;
  /** The batch call each job of a running batch belongs to, so its abort can reach the call. */
  private readonly runs = new Map<string, BatchRun>();
  private readonly completer: Completer;
  private readonly snoozedHook: ((delayMs: number) => void) | undefined;
  private readonly jobs = new Map<string, JobRecord>();
  /** Whether claims may carry outcomes waiting for their write (see StoreCapabilities.claimsCarryOutcomes). */
  private readonly carryOutcomes: boolean;
  /**
   * Whether the last claim came back with fewer jobs than it asked for. The next claim then carries
   * every outcome waiting for its write: no backlog waits for the two to run side by side, and a
   * cap that held jobs back counts the slots those outcomes free. After a full claim it carries
   * only those waiting behind the completer's write in flight, and the rest go beside it, so a
   * backlog keeps two connections busy (Completer.take).
   */
  private lastClaimShort = true;
  private readonly aborts = new Map<string, AttemptAbort>();
  /**
   * What `settled` tells of each attempt this node started: its name and queue, and when it started
   * and ended by the node's clock. Keyed by job and attempt (this node may reclaim a job whose
   * earlier attempt it still runs), and removed only when that attempt settles, however it ends.
   */
  private readonly attempts = new Map<string, { readonly name: string; readonly queue: string; readonly startedAt: number; endedAt?: number; errorType?: string }>();

  constructor(deps: NodeAttemptsDeps) {
    this.store = deps.store;
    this.workerId = deps.workerId;
    this.options = deps.options;
    this.driver = deps.driver;
    this.clock = deps.clock;
    this.logger = deps.logger;
    this.events = deps.events;
    this.stats = deps.stats;
    this.emit = deps.emit;
    this.contact = deps.contact;
    this.snoozedHook = deps.snoozed;
    this.carryOutcomes = this.store.jobCompleteAndClaim !== undefined && this.store.capabilities?.claimsCarryOutcomes !== false;
    const hooks = checkAttemptHooks(deps.attemptHooks);
    this.invoker = deps.invoker;
    // The names the node checked when it was built (WorkerNode's batchAhead): only these are batched.
    this.batchHandlers = deps.invoker.batchHandlers?.() ?? new Map();
    this.executor = new AttemptExecutor({
      store: this.store,
      invoker: deps.invoker,
      workerId: this.workerId,
      random: deps.random,
      logger: this.logger,
      timers: deps.timers,
      errorLogDetail: this.options.errorLogDetail,
      hooks,
      progress: {
        board: deps.progress,
        send: (lease) => this.store.jobHeartbeat({ workerId: this.workerId, leases: [lease], leaseMs: this.options.leaseMs }),
      },
    });
    this.batches = new BatchExecutor({
      store: this.store,
      invoker: deps.invoker,
      workerId: this.workerId,
      logger: this.logger,
      timers: deps.timers,
      hooks,
      progress: deps.progress,
      attempts: this.executor,
    });
    this.completer = new Completer({
      store: this.store,
      workerId: this.workerId,
      logger: this.logger,
      timers: deps.timers,
      stillHeld: (jobId, attempt) => this.driver.mayReport(jobId, attempt),
      onSettled: (outcome, result) => this.settled(outcome, result),
      errorLogDetail: this.options.errorLogDetail,
    });
  }

  /**
   * Claims as many jobs as the driver has room for now, and tells the driver what came back.
   * Outcomes waiting for their write go with it when the store writes outcomes and claims in one
   * call (on PostgreSQL one statement): all of them after a short claim, otherwise only those
   * behind the completer's write in flight ({@link lastClaimShort}, Completer.take).
   */
  async claim(lapsed: boolean): Promise<void> {
    const sentAt = this.clock.now();
    // Sized now, not when asked: slots freed since then count. None means shutdown began before
    // the claim went out, or the room the driver saw when it asked is gone (the local queue's reach
    // shrank as a slower handler settled); either way it claims nothing, and says so with limit 0.
    const limit = this.driver.claimLimit();
    if (limit === 0) {
      this.emit({ type: 'claimed', now: sentAt, sentAt, limit: 0, jobs: [] });
      return;
    }
    const claim = { limit, queues: this.options.queues, leaseMs: this.options.leaseMs, includeLapsed: lapsed };
    const outcomes = this.carryOutcomes ? this.completer.take(this.lastClaimShort) : [];
    let jobs: JobRecord[];
    try {
      if (outcomes.length === 0) {
        jobs = await this.store.jobClaim({ workerId: this.workerId, ...claim });
      } else {
        let both: CompleteAndClaimResult;
        try {
          both = await this.store.jobCompleteAndClaim!({ workerId: this.workerId, outcomes, claim });
        } catch (error) {
          this.completer.giveBack(outcomes, error);
          throw error;
        }
        this.completer.settle(outcomes, both.results);
        if (both.claimError !== undefined) throw both.claimError;
        jobs = both.jobs;
      }
    } catch (error) {
      this.logger.warn(`claim failed (${describe(error)}); polling will try again.`);
      this.events.publish('claimFailed', { error: describe(error) });
      this.emit({ type: 'claim_failed', now: this.clock.now(), lapsed });
      return;
    }
    this.lastClaimShort = jobs.length < limit;
    for (const job of jobs) this.jobs.set(job.id, job);
    this.stats.claimed += jobs.length;
    this.contact();
    this.emit({ type: 'claimed', now: this.clock.now(), sentAt, limit, jobs: jobs.map((job) => this.claimedLease(job)) });
  }

  /** A claimed job for the driver: with its batch spec when its handler takes many jobs at once. */
  private claimedLease(job: JobRecord): ClaimedLease {
    const batch = this.batchHandlers.get(job.name);
    return batch === undefined ? { jobId: job.id, attempt: job.attempt } : { jobId: job.id, attempt: job.attempt, batch: { key: job.name, size: batch.size, waitMs: batch.waitMs } };
  }

  /** Runs a claimed job's attempt; its outcome goes to the completer unless its own transaction wrote it. */
  async execute(jobId: string): Promise<void> {
    const job = this.jobs.get(jobId);
    if (!job) return;
    const abort = new AttemptAbort();
    this.aborts.set(jobId, abort);
    const startedAt = this.clock.now();
    const attempt = { name: job.name, queue: job.queue, startedAt } as { name: string; queue: string; startedAt: number; endedAt?: number; errorType?: string };
    this.attempts.set(`${jobId}:${job.attempt}`, attempt);
    this.announceStart(job, startedAt);
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

  /**
   * Runs the jobs of one batch call (all of one wire name) through its handler once; each job's
   * outcome then goes to the completer on its own, fenced on its own lease.
   */
  async executeBatch(leases: readonly LeaseRef[]): Promise<void> {
    const jobs = leases.map(({ jobId }) => this.jobs.get(jobId)).filter((job): job is JobRecord => job !== undefined);
    if (jobs.length === 0) return;
    const run = new BatchRun(jobs, jobs.map(() => new AttemptAbort()));
    const startedAt = this.clock.now();
    jobs.forEach((job, i) => {
      this.aborts.set(job.id, run.aborts[i]!);
      this.runs.set(job.id, run);
      this.attempts.set(`${job.id}:${job.attempt}`, { name: job.name, queue: job.queue, startedAt });
      this.announceStart(job, startedAt);
    });
    const definition = this.invoker.definition(jobs[0]!.name)!;
    let reports: AttemptReport[];
    try {
      reports = await this.batches.execute(run, definition);
    } catch (error) {
      // Only a progress write can throw here; the leases lapse and the jobs run again.
      this.logger.warn(`the batch of ${jobs.length} ${jobs[0]!.name} job(s) failed to end (${describeError(error, this.options.errorLogDetail)}); their leases will lapse.`);
      reports = [];
    }
    const endedAt = this.clock.now();
    jobs.forEach((job, i) => {
      const attempt = this.attempts.get(`${job.id}:${job.attempt}`);
      const report = reports[i];
      if (attempt) {
        attempt.endedAt = endedAt;
        if (report?.kind === 'report' && report.errorType !== undefined) attempt.errorType = report.errorType;
      }
      this.aborts.delete(job.id);
      this.runs.delete(job.id);
      this.emit({ type: 'attempt_settled', now: endedAt, jobId: job.id, attempt: job.attempt });
      if (report === undefined) this.settled({ jobId: job.id, attempt: job.attempt, kind: 'succeeded' }, 'dropped');
      else if (report.kind === 'recorded') this.settled(report.outcome, report.result);
      else this.completer.submit(report.outcome);
    });
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
    else if (result.state === 'scheduled' && outcome.kind === 'snoozed') {
      this.stats.snoozed += 1;
      this.snoozedHook?.(outcome.delayMs);
    }
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

  private announceStart(job: JobRecord, startedAt: number): void {
    this.events.publish('attemptStarted', {
      jobId: job.id,
      name: job.name,
      queue: job.queue,
      attempt: job.attempt,
      maxAttempts: job.maxAttempts,
      workerId: this.workerId,
      runAt: job.runAt,
      startedAt: new Date(startedAt),
      waitMs: Math.max(0, startedAt - job.runAt.getTime()),
    });
  }

  /** Aborts an attempt the driver gave up on; a lost or lapsed lease is counted, logged and announced. */
  abort(command: Extract<NodeCommand, { readonly type: 'abort' }>): void {
    if (command.reason === 'lease_lost' || command.reason === 'lease_expired') {
      this.stats.leasesLost += 1;
      this.logger.warn(`lost the lease of ${command.jobId} attempt ${command.attempt} (${command.reason}); aborting the attempt.`, { jobId: command.jobId, attempt: command.attempt });
      this.events.publish('leaseLost', { jobId: command.jobId, attempt: command.attempt, reason: command.reason });
    }
    this.aborts.get(command.jobId)?.abort(command.reason);
    this.runs.get(command.jobId)?.jobAborted();
  }

  /** Forgets a job claimed ahead whose lease was lost or lapsed before it started; counted and announced as a lost lease. */
  discard(command: Extract<NodeCommand, { readonly type: 'discard' }>): void {
    const job = this.jobs.get(command.jobId);
    if (job?.attempt === command.attempt) this.jobs.delete(command.jobId);
    this.stats.leasesLost += 1;
    this.logger.warn(`lost the lease of ${command.jobId} attempt ${command.attempt} (${command.reason}) before it started; it was not run.`, { jobId: command.jobId, attempt: command.attempt });
    this.events.publish('leaseLost', { jobId: command.jobId, attempt: command.attempt, reason: command.reason });
  }

  /** Hands leases back on shutdown; one that cannot go back lapses instead. */
  async relinquish(leases: readonly LeaseRef[]): Promise<void> {
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

  /** Stops writing outcomes: those still pending, and any submitted later, are dropped (see Completer.close). */
  close(): void {
    this.completer.close();
  }
}
