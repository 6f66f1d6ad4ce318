import {
  assertQueueName,
  assertUuid,
  CapabilityNotSupportedError,
  isClaimable,
  JobNotFoundError,
  ManualClock,
  needsSweep,
  resolveLimits,
  transition,
  type Clock,
  type Effect,
  type JobRecord,
  type JobEvent,
  type JobState,
  type LifecycleFields,
  type SchedulerLimits,
} from '../../core/index.js';
import { normalizeEnqueueMany, type EnqueueInput, type NewJob } from '../enqueue-input.js';
import {
  type AuditEntry,
  type Schedule,
  type ScheduleRow,
  ScheduleStoreBase,
  type ScheduleTx,
  toSchedule,
} from '../schedules/index.js';
import { memoryScheduleTx } from './memory-schedule-tx.js';
import { LATEST_SCHEMA_VERSION } from '../sql-migrations.js';
import { toJob, type JobRow } from '../job-row.js';
import { cancelResult, replayResult, type OperatorTransition } from '../operator-transition.js';
import { actorOf } from '../operator-options.js';
import type {
  AuditRecord,
  JobStats,
  CancelResult,
  OperatorOptions,
  ClaimParams,
  CompleteParams,
  EnqueueOptions,
  EnqueueResult,
  ExpiredLease,
  ExpireLeasesParams,
  HeartbeatParams,
  HeartbeatResult,
  JobStore,
  ListDeadLetteredParams,
  ListJobsParams,
  OutcomeResult,
  RelinquishParams,
} from '../job-store.js';
import type { AttemptTransaction } from '../attempt-transaction.js';
import type { StoreCapabilities } from '../store-capabilities.js';
import { WakeHub, type WakeListener, type WakeSubscription } from '../wake-hints.js';
import {
  checkClaimParams,
  checkCompleteParams,
  checkDeadLetterListParams,
  checkExpireParams,
  checkHeartbeatParams,
  checkListParams,
  checkRelinquishParams,
  type NormalizedOutcome,
} from '../store-params.js';

export interface MemoryJobStoreOptions {
  /** The store's clock. Defaults to a {@link ManualClock}: time moves only when a test advances it. */
  readonly clock?: Clock;
  readonly limits?: Partial<SchedulerLimits>;
}

/**
 * A store that lives in one process's memory and runs on an injected clock. It applies the core
 * lifecycle function directly, so it is the reference the SQL adapters are held to. Use it for
 * unit tests and the simulator; it keeps nothing across restarts.
 */
export class MemoryJobStore extends ScheduleStoreBase implements JobStore {
  readonly capabilities: StoreCapabilities = Object.freeze({
    transactionalEnqueue: false,
    wakeHints: 'process',
    concurrentTransactions: true,
    attemptTransactions: false,
  });

  readonly clock: Clock;
  readonly limits: SchedulerLimits;
  private readonly hints = new WakeHub();
  private readonly jobs = new Map<string, JobRow>();
  private readonly pausedQueues = new Set<string>();
  private readonly schedules = new Map<string, ScheduleRow>();
  private readonly auditLog: AuditRecord[] = [];
  private nextSeq = 1;

  constructor(options: MemoryJobStoreOptions = {}) {
    super();
    this.clock = options.clock ?? new ManualClock();
    this.limits = resolveLimits(options.limits);
  }

  async migrate(): Promise<void> {}

  async close(): Promise<void> {}

  async subscribeWakeHints(listener: WakeListener): Promise<WakeSubscription> {
    return this.hints.subscribe(listener);
  }

  beginAttempt(): AttemptTransaction {
    throw new CapabilityNotSupportedError(
      'attemptTransactions',
      'The in-memory store has no database transactions; use @Job({ transaction: false }) or the PostgreSQL or SQLite store.',
    );
  }

  async jobEnqueue(input: EnqueueInput, options?: EnqueueOptions): Promise<EnqueueResult> {
    const [result] = await this.jobEnqueueMany([input], options);
    return result!;
  }

  async jobEnqueueMany(inputs: readonly EnqueueInput[], options?: EnqueueOptions): Promise<EnqueueResult[]> {
    if (options?.manager !== undefined) {
      throw new CapabilityNotSupportedError(
        'transactionalEnqueue',
        'The in-memory store cannot join a TypeORM transaction; enqueue without a manager or use the PostgreSQL or SQLite store.',
      );
    }
    const jobs = normalizeEnqueueMany(inputs, this.limits);
    const created = this.insertJobs(jobs);
    return jobs.map((job) => ({ id: job.id, created: created.has(job.id) }));
  }

  private insertJobs(jobs: readonly NewJob[]): Set<string> {
    const now = this.clock.now();
    const created = new Set<string>();
    const due = new Set<string>();
    for (const job of jobs) {
      if (this.jobs.has(job.id)) continue;
      const runAt = job.runAt ?? now + job.delayMs;
      this.jobs.set(job.id, {
        id: job.id,
        seq: this.nextSeq++,
        name: job.name,
        queue: job.queue,
        payload: job.payload,
        state: 'scheduled',
        runAt,
        scheduledFor: runAt,
        scheduleId: job.scheduleId ?? null,
        attempt: 0,
        maxAttempts: job.maxAttempts,
        workerId: null,
        leasedUntil: null,
        cancelRequested: false,
        lastError: null,
        output: null,
        createdAt: now,
        updatedAt: now,
        finishedAt: null,
      });
      if (runAt <= now) due.add(job.queue);
      created.add(job.id);
    }
    for (const queue of due) this.hints.emit(queue);
    return created;
  }

  async jobClaim(params: ClaimParams): Promise<JobRecord[]> {
    const { workerId, limit, queues, leaseMs } = checkClaimParams(params);
    const now = this.clock.now();
    const wanted = new Set(queues.filter((q) => !this.pausedQueues.has(q)));
    const picked = [...this.jobs.values()]
      .filter((row) => wanted.has(row.queue) && isClaimable(row, now))
      .sort((a, b) => a.runAt - b.runAt || a.seq - b.seq)
      .slice(0, limit);
    return picked.map((row) => toJob(this.apply(row, { kind: 'claim', workerId, leaseMs }, now)));
  }

  async jobHeartbeat(params: HeartbeatParams): Promise<HeartbeatResult> {
    const { workerId, leases, leaseMs } = checkHeartbeatParams(params);
    const now = this.clock.now();
    const renewed: HeartbeatResult['renewed'][number][] = [];
    const lost: HeartbeatResult['lost'][number][] = [];
    for (const lease of leases) {
      const row = this.jobs.get(lease.jobId);
      const result = row && transition(row, { kind: 'heartbeat', workerId, attempt: lease.attempt, leaseMs }, now);
      if (row && result?.ok) {
        const next = this.store(row, result.next);
        renewed.push({ ...lease, leasedUntil: new Date(next.leasedUntil!), cancelRequested: next.cancelRequested });
      } else {
        lost.push(lease);
      }
    }
    return { renewed, lost };
  }

  async jobCompleteMany(params: CompleteParams): Promise<OutcomeResult[]> {
    const { workerId, outcomes } = checkCompleteParams(params, this.limits);
    const now = this.clock.now();
    return outcomes.map((outcome) => this.fenced(outcome.jobId, outcome.attempt, outcomeEvent(workerId, outcome), now));
  }

  async jobRelinquishMany(params: RelinquishParams): Promise<OutcomeResult[]> {
    const { workerId, leases } = checkRelinquishParams(params);
    const now = this.clock.now();
    return leases.map((lease) => this.fenced(lease.jobId, lease.attempt, { kind: 'relinquish', workerId, attempt: lease.attempt }, now));
  }

  async jobExpireLeases(params: ExpireLeasesParams): Promise<ExpiredLease[]> {
    const limit = checkExpireParams(params);
    const now = this.clock.now();
    const due = [...this.jobs.values()].filter((row) => needsSweep(row, now)).slice(0, limit);
    return due.map((row) => {
      const next = this.apply(row, { kind: 'expire' }, now);
      return { jobId: next.id, attempt: next.attempt, state: next.state };
    });
  }

  async jobReplay(jobId: string, options?: OperatorOptions): Promise<JobRecord> {
    const job = replayResult(this.replayJob(jobId));
    this.audit({ actor: actorOf(options), action: 'job.replay', target: job.id });
    return job;
  }

  async jobCancel(jobId: string, options?: OperatorOptions): Promise<CancelResult> {
    const result = cancelResult(this.operator(jobId, { kind: 'cancel' }));
    this.audit({ actor: actorOf(options), action: 'job.cancel', target: result.job.id, detail: { outcome: result.outcome } });
    return result;
  }

  /** Replays a job; the schedule it stopped, if any, mints again. */
  private replayJob(jobId: string): OperatorTransition {
    const outcome = this.operator(jobId, { kind: 'replay' });
    const schedule = outcome.after.scheduleId === null ? undefined : this.schedules.get(outcome.after.scheduleId);
    if (outcome.result.ok && schedule?.state === 'dead_lettered' && schedule.haltedJobId === outcome.after.id) {
      this.schedules.set(schedule.id, { ...schedule, state: 'active', haltedJobId: null, updatedAt: this.clock.now() });
    }
    return outcome;
  }

  async jobGet(jobId: string): Promise<JobRecord | null> {
    const row = this.jobs.get(assertUuid(jobId, 'jobId'));
    return row ? toJob(row) : null;
  }

  async jobList(params?: ListJobsParams): Promise<JobRecord[]> {
    const { state, queue, name, limit } = checkListParams(params);
    return [...this.jobs.values()]
      .filter((row) => (state === undefined || row.state === state) && (queue === undefined || row.queue === queue) && (name === undefined || row.name === name))
      .sort((a, b) => b.seq - a.seq)
      .slice(0, limit)
      .map(toJob);
  }

  async jobListDeadLettered(params?: ListDeadLetteredParams): Promise<JobRecord[]> {
    const limit = checkDeadLetterListParams(params);
    return [...this.jobs.values()]
      .filter((row) => row.state === 'dead_lettered')
      .sort((a, b) => b.finishedAt! - a.finishedAt! || b.seq - a.seq)
      .slice(0, limit)
      .map(toJob);
  }

  async queuePause(queue: string, options?: OperatorOptions): Promise<void> {
    this.pausedQueues.add(assertQueueName(queue));
    this.audit({ actor: actorOf(options), action: 'queue.pause', target: queue });
  }

  async queueResume(queue: string, options?: OperatorOptions): Promise<void> {
    this.pausedQueues.delete(assertQueueName(queue));
    this.audit({ actor: actorOf(options), action: 'queue.resume', target: queue });
  }


  async scheduleGet(scheduleId: string): Promise<Schedule | null> {
    const row = this.schedules.get(assertUuid(scheduleId, 'scheduleId'));
    return row ? toSchedule(row) : null;
  }

  async scheduleList(): Promise<Schedule[]> {
    return (await this.scheduleTxObject().listSchedules()).map(toSchedule);
  }







  async auditList(params?: { readonly limit?: number }): Promise<AuditRecord[]> {
    const limit = checkDeadLetterListParams(params);
    return this.auditLog.slice(-limit).reverse();
  }

  async jobStats(): Promise<JobStats> {
    const now = this.clock.now();
    const counts = new Map<string, { queue: string; state: JobState; count: number }>();
    let oldestDueAt: number | null = null;
    for (const row of this.jobs.values()) {
      const key = `${row.queue}\u0000${row.state}`;
      const entry = counts.get(key) ?? { queue: row.queue, state: row.state, count: 0 };
      entry.count += 1;
      counts.set(key, entry);
      if (row.state === 'scheduled' && row.runAt <= now && (oldestDueAt === null || row.runAt < oldestDueAt)) oldestDueAt = row.runAt;
    }
    return {
      counts: [...counts.values()].sort((a, b) => a.queue.localeCompare(b.queue) || a.state.localeCompare(b.state)),
      oldestDueAt: oldestDueAt === null ? null : new Date(oldestDueAt),
      now: new Date(now),
    };
  }

  /** The in-memory store has no migrations: it is always at the newest version. */
  async schemaVersion(): Promise<number | null> {
    return LATEST_SCHEMA_VERSION;
  }

  /** Every schedule row, for oracles and tests that compare whole rows. */
  scheduleRows(): ScheduleRow[] {
    return [...this.schedules.values()].sort((a, b) => a.createdAt - b.createdAt || a.id.localeCompare(b.id)).map((row) => ({ ...row }));
  }

  protected scheduleTx<T>(work: (tx: ScheduleTx) => Promise<T>): Promise<T> {
    return work(this.scheduleTxObject());
  }

  private scheduleTxObject(): ScheduleTx {
    return memoryScheduleTx(
      {
        schedules: this.schedules,
        jobState: (id) => this.jobs.get(id)?.state,
        insertJobs: (jobs) => this.insertJobs(jobs),
        replayJob: (jobId) => this.replayJob(jobId),
        audit: (entry) => this.audit(entry),
      },
      this.clock.now(),
    );
  }

  private audit(entry: AuditEntry): void {
    this.auditLog.push({ at: new Date(this.clock.now()), actor: entry.actor, action: entry.action, target: entry.target, detail: entry.detail ?? null });
  }

  /** Every stored row, in enqueue order: for oracles and tests that compare whole rows. */
  rows(): JobRow[] {
    return [...this.jobs.values()].sort((a, b) => a.seq - b.seq).map((row) => ({ ...row }));
  }

  /** The paused queues, sorted. */
  pausedQueueNames(): string[] {
    return [...this.pausedQueues].sort();
  }

  private operator(jobId: string, event: JobEvent): OperatorTransition {
    const before = this.require(jobId);
    const result = transition(before, event, this.clock.now());
    const after = result.ok ? this.store(before, result.next, result.effects) : before;
    return { before, after, result };
  }

  private fenced(jobId: string, attempt: number, event: JobEvent, now: number): OutcomeResult {
    const row = this.jobs.get(jobId);
    const result = row && transition(row, event, now);
    if (!row || !result?.ok) return { jobId, attempt, status: 'stale' };
    return { jobId, attempt, status: 'applied', state: this.store(row, result.next, result.effects).state };
  }

  private apply(row: JobRow, event: JobEvent, now: number): JobRow {
    const result = transition(row, event, now);
    if (!result.ok) throw new Error(`BUG: ${event.kind} rejected for a job selected as eligible (${result.rejection}).`);
    return this.store(row, result.next, result.effects);
  }

  private store(row: JobRow, next: LifecycleFields, effects: readonly Effect[] = []): JobRow {
    const updated: JobRow = { ...row, ...next };
    this.jobs.set(row.id, updated);
    for (const effect of effects) {
      if (effect.type === 'wake') this.hints.emit(updated.queue);
      if (effect.type === 'halt_schedule' && updated.scheduleId !== null) this.haltSchedule(updated.scheduleId, updated.id);
    }
    return updated;
  }

  private haltSchedule(scheduleId: string, jobId: string): void {
    const schedule = this.schedules.get(scheduleId);
    if (schedule && schedule.state !== 'dead_lettered') {
      this.schedules.set(scheduleId, { ...schedule, state: 'dead_lettered', haltedJobId: jobId, updatedAt: this.clock.now() });
    }
  }

  private require(jobId: string): JobRow {
    const id = assertUuid(jobId, 'jobId');
    const row = this.jobs.get(id);
    if (!row) throw new JobNotFoundError(id);
    return row;
  }
}

function outcomeEvent(workerId: string, outcome: NormalizedOutcome): JobEvent {
  const { attempt } = outcome;
  switch (outcome.kind) {
    case 'succeeded':
      return { kind: 'succeed', workerId, attempt, output: outcome.output };
    case 'failed':
      return { kind: 'fail', workerId, attempt, error: outcome.error!, retryDelayMs: outcome.retryDelayMs };
    case 'dead_lettered':
      return { kind: 'dead_letter', workerId, attempt, error: outcome.error! };
    case 'quarantined':
      return { kind: 'quarantine', workerId, attempt, reason: outcome.error! };
  }
}
