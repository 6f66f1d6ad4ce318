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
  type LifecycleFields,
  type SchedulerLimits,
} from '../../core/index.js';
import { normalizeEnqueueMany, type EnqueueInput } from '../enqueue-input.js';
import { toJob, type JobRow } from '../job-row.js';
import { cancelResult, replayResult, type OperatorTransition } from '../operator-transition.js';
import type {
  CancelResult,
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
export class MemoryJobStore implements JobStore {
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
  private nextSeq = 1;

  constructor(options: MemoryJobStoreOptions = {}) {
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
    const now = this.clock.now();
    const due = new Set<string>();
    const results = jobs.map((job) => {
      if (this.jobs.has(job.id)) return { id: job.id, created: false };
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
      return { id: job.id, created: true };
    });
    for (const queue of due) this.hints.emit(queue);
    return results;
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

  async jobReplay(jobId: string): Promise<JobRecord> {
    return replayResult(this.operator(jobId, { kind: 'replay' }));
  }

  async jobCancel(jobId: string): Promise<CancelResult> {
    return cancelResult(this.operator(jobId, { kind: 'cancel' }));
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

  async queuePause(queue: string): Promise<void> {
    this.pausedQueues.add(assertQueueName(queue));
  }

  async queueResume(queue: string): Promise<void> {
    this.pausedQueues.delete(assertQueueName(queue));
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
    if (effects.some((effect) => effect.type === 'wake')) this.hints.emit(updated.queue);
    return updated;
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
