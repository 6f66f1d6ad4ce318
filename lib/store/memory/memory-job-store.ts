import {
  assertDelayMs,
  assertPositiveInteger,
  assertQueueName,
  assertUuid,
  CapabilityNotSupportedError,
  JobNotFoundError,
  LIFECYCLE_RULES,
  ManualClock,
  resolveLimits,
  type LifecycleRules,
  type Clock,
  type Effect,
  type JobRecord,
  type HistoryPolicy,
  type JobEvent,
  type JobState,
  type LifecycleFields,
  type SchedulerLimits,
} from '../../core/index.js';
import { normalizeEnqueueMany, type NewJob } from '../enqueue-input.js';
import {
  type AuditEntry,
  type Schedule,
  type ScheduleRow,
  ScheduleStoreBase,
  type ScheduleTx,
  toSchedule,
} from '../schedules/index.js';
import { memoryScheduleTx } from './memory-schedule-tx.js';
import { guardReplayMemory, memoryHolders } from './memory-unique.js';
import { enqueueResults, hasUniqueKeys, planUnique, type UniqueReplace } from '../unique/unique-plan.js';
import { assertAcyclic, parentsToLookUp, planDependencies } from '../dependencies/dependency-plan.js';
import { limitKeysOf, pickWithinLimits } from '../limit-room.js';
import {
  assertHistoryPolicy,
  assertLimitMax,
  checkHistoryRead,
  checkObserverCommit,
  checkObserverFail,
  checkObserverLease,
  limitKey,
  limitOf,
  SERIAL_POSITION,
} from '../effect-params.js';
import { LATEST_SCHEMA_VERSION } from '../sql-migrations.js';
import { toJob, type JobRow } from '../job-row.js';
import { cancelResult, replayResult, type OperatorTransition } from '../operator-transition.js';
import { actorOf } from '../operator-options.js';
import { queueSummaries, type QueueCountRow, type QueueSummary } from '../queue-summary.js';
import type {
  AuditRecord,
  ConcurrencyLimit,
  HistoryEntry,
  JobStats,
  ObserverLease,
  ParentOutput,
  CancelResult,
  ClaimParams,
  CompleteParams,
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
  AttemptTransaction,
  AuditListParams,
  ConcurrencyLimitSetParams,
  EnqueueManyParams,
  EnqueueParams,
  HistoryReadParams,
  HistoryTrimParams,
  JobActionParams,
  JobRef,
  ObserverCommitParams,
  ObserverFailParams,
  ObserverLeaseParams,
  ParentOutputParams,
  PurgeParams,
  QueueActionParams,
  ScheduleRef,
  SettleDependenciesParams,
  WakeHintParams,
} from '../job-store.js';
import type { StoreCapabilities } from '../store-capabilities.js';
import { WakeHub, type WakeSubscription } from '../wake-hints.js';
import {
  checkClaimParams,
  checkCompleteParams,
  checkDeadLetterListParams,
  checkExpireParams,
  checkHeartbeatParams,
  checkListParams,
  checkRelinquishParams,
  MAX_BATCH,
  optionalParamsOf,
  paramsOf,
  type NormalizedOutcome,
} from '../store-params.js';

export interface MemoryJobStoreOptions {
  /** The store's clock. Defaults to a {@link ManualClock}: time moves only when a test advances it. */
  readonly clock?: Clock;
  readonly limits?: Partial<SchedulerLimits>;
  /** What the transition history keeps. Default `transitions_and_errors`. */
  readonly historyPolicy?: HistoryPolicy;
  /** Told of every write as it happens: the simulator's oracles read the run's history from it. */
  readonly probe?: MemoryStoreProbe;
  /**
   * @internal The lifecycle rules to apply. Only the simulator's sabotage self-test sets this, to
   * prove its oracles catch a broken rule; everything else gets the real ones.
   */
  readonly lifecycle?: LifecycleRules;
  /**
   * @internal False writes every job as if no unique key were held. Only the simulator's sabotage
   * self-test sets it, to prove its unique-key oracle catches the breach.
   */
  readonly enforceUniqueKeys?: boolean;
}

/**
 * Hooks the in-memory store calls inside each write, in the order the writes happen. They see what
 * was stored, including whatever a broken rule let through, so a checker built on them judges the
 * store's behaviour rather than trusting it.
 */
export interface MemoryStoreProbe {
  /** A job row was inserted (`before` undefined) or rewritten. */
  rowWritten?(before: JobRow | undefined, after: JobRow): void;
  /** A dependency edge settled: its parent's end counted toward the child's latch. */
  edgeSettled?(parentId: string, childId: string): void;
  historyAppended?(entry: HistoryEntry): void;
  /** A claimed job took its concurrency slots. */
  slotTaken?(jobId: string): void;
  /** A job gave its slots back. */
  slotReleased?(jobId: string): void;
}

interface MemoryCursor {
  lastId: number;
  leasedBy: string | null;
  leasedUntil: number | null;
  failures: number;
  retryAt: number | null;
  lastError: string | null;
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
  /** Queues resumed at some point: like a SQL store's pause rows, they stay listed without jobs. */
  private readonly knownQueues = new Set<string>();
  private readonly schedules = new Map<string, ScheduleRow>();
  private readonly auditLog: AuditRecord[] = [];
  /** Edges by parent, each settled at most once. */
  private readonly children = new Map<string, { childId: string; settled: boolean }[]>();
  private readonly parents = new Map<string, string[]>();
  /** Parents whose edges are still to settle while a cascade is under way (see settleDependants). */
  private cascade: JobRow[] | null = null;
  private readonly concurrencyLimits = new Map<string, number>();
  private readonly history: HistoryEntry[] = [];
  private nextHistoryId = 1;
  private readonly cursors = new Map<string, MemoryCursor>();
  /** Which state changes this store records in job history. */
  readonly historyPolicy: HistoryPolicy;
  private nextSeq = 1;
  /** Running jobs that hold their concurrency slots: claim takes them, leaving `running` gives them back. */
  private readonly slotHolders = new Set<string>();
  private readonly probe: MemoryStoreProbe;
  private readonly rules: LifecycleRules;
  private readonly enforceUniqueKeys: boolean;

  constructor(options: MemoryJobStoreOptions = {}) {
    super();
    this.probe = options.probe ?? {};
    this.rules = options.lifecycle ?? LIFECYCLE_RULES;
    this.enforceUniqueKeys = options.enforceUniqueKeys ?? true;
    this.clock = options.clock ?? new ManualClock();
    this.limits = resolveLimits(options.limits);
    this.historyPolicy = assertHistoryPolicy(options.historyPolicy);
  }

  async migrate(): Promise<void> {}

  async close(): Promise<void> {}

  async subscribeWakeHints(params: WakeHintParams): Promise<WakeSubscription> {
    const { listener } = paramsOf('subscribeWakeHints', params, '{ listener }');
    return this.hints.subscribe(listener);
  }

  beginAttempt(): AttemptTransaction {
    throw new CapabilityNotSupportedError(
      'attemptTransactions',
      'The in-memory store has no database transactions; use @Job({ transaction: false }) or the PostgreSQL or SQLite store.',
    );
  }

  async jobEnqueue(params: EnqueueParams): Promise<EnqueueResult> {
    const { job: input, ...options } = paramsOf('jobEnqueue', params, '{ job, manager? }');
    const [result] = await this.jobEnqueueMany({ jobs: [input], ...options });
    return result!;
  }

  async jobEnqueueMany(params: EnqueueManyParams): Promise<EnqueueResult[]> {
    const { jobs: inputs, ...options } = paramsOf('jobEnqueueMany', params, '{ jobs, manager? }');
    if (options?.manager !== undefined) {
      throw new CapabilityNotSupportedError(
        'transactionalEnqueue',
        'The in-memory store cannot join a TypeORM transaction; enqueue without a manager or use the PostgreSQL or SQLite store.',
      );
    }
    const jobs = normalizeEnqueueMany(inputs, this.limits);
    if (this.enforceUniqueKeys && hasUniqueKeys(jobs)) {
      assertAcyclic(jobs);
      const plan = planUnique(jobs.filter((job) => !this.jobs.has(job.id)), memoryHolders(this.jobs.values(), jobs));
      const created = this.insertJobs(plan.insert);
      return enqueueResults(jobs, created, plan, new Set(plan.replace.map((op) => this.rewriteHolder(op))));
    }
    const created = this.insertJobs(jobs);
    return jobs.map((job) => ({ id: job.id, created: created.has(job.id) }));
  }

  /** Gives a holder that has not started (planUnique checked) a new payload and run time. */
  private rewriteHolder(op: UniqueReplace): string {
    const now = this.clock.now();
    const row = this.jobs.get(op.id)!;
    const runAt = op.runAt ?? now + op.delayMs;
    const rewritten: JobRow = { ...row, payload: op.payload, runAt, scheduledFor: runAt, updatedAt: now };
    this.jobs.set(row.id, rewritten);
    this.probe.rowWritten?.(row, rewritten);
    if (rewritten.state === 'scheduled' && runAt <= now) this.hints.emit(rewritten.queue);
    return row.id;
  }

  private storedStates(ids: readonly string[]): Map<string, JobState> {
    return new Map(ids.flatMap((id) => (this.jobs.has(id) ? [[id, this.jobs.get(id)!.state] as const] : [])));
  }

  private insertJobs(jobs: readonly NewJob[]): Set<string> {
    const now = this.clock.now();
    // The whole batch is planned (and checked) as written; a job whose id exists writes nothing.
    const plans = planDependencies(jobs, this.storedStates(parentsToLookUp(jobs))).filter((plan) => !this.jobs.has(plan.job.id));
    const created = new Set<string>();
    const due = new Set<string>();
    for (const { job, state, pendingParents, lastError, edges } of plans) {
      const runAt = job.runAt ?? now + job.delayMs;
      const row: JobRow = {
        id: job.id,
        seq: this.nextSeq++,
        name: job.name,
        queue: job.queue,
        payload: job.payload,
        state,
        runAt,
        scheduledFor: runAt,
        scheduleId: job.scheduleId ?? null,
        pendingParents,
        dependencyMode: job.dependencyMode ?? null,
        concurrencyKey: job.concurrencyKey ?? null,
        uniqueKey: job.uniqueKey ?? null,
        retry: job.retry ?? null,
        attempt: 0,
        maxAttempts: job.maxAttempts,
        workerId: null,
        leasedUntil: null,
        cancelRequested: false,
        lastError,
        output: null,
        createdAt: now,
        updatedAt: now,
        finishedAt: state === 'cancelled' ? now : null,
      };
      this.jobs.set(job.id, row);
      this.probe.rowWritten?.(undefined, row);
      this.record(row, row.lastError);
      for (const edge of edges) {
        const list = this.children.get(edge.parentId) ?? [];
        list.push({ childId: job.id, settled: edge.settled });
        this.children.set(edge.parentId, list);
      }
      if (edges.length > 0) this.parents.set(job.id, edges.map((e) => e.parentId));
      const declared = `key:${job.concurrencyKey}`;
      if (job.concurrencyKey && job.concurrencyLimit && !this.concurrencyLimits.has(declared)) this.concurrencyLimits.set(declared, job.concurrencyLimit);
      if (state === 'scheduled' && runAt <= now) due.add(job.queue);
      created.add(job.id);
    }
    for (const queue of due) this.hints.emit(queue);
    return created;
  }

  async jobClaim(params: ClaimParams): Promise<JobRecord[]> {
    const { workerId, limit, queues, leaseMs, includeLapsed } = checkClaimParams(params);
    const now = this.clock.now();
    const wanted = new Set(queues.filter((q) => !this.pausedQueues.has(q)));
    const candidates = [...this.jobs.values()]
      .filter((row) => wanted.has(row.queue) && (includeLapsed || row.state !== 'running') && this.rules.isClaimable(row, now))
      .sort((a, b) => a.runAt - b.runAt || a.seq - b.seq);
    const picked = this.withinLimits(candidates, now, limit);
    return picked.map((row) => {
      const claimed = this.apply(row, { kind: 'claim', workerId, leaseMs }, now);
      this.slotHolders.add(claimed.id);
      this.probe.slotTaken?.(claimed.id);
      return toJob(claimed);
    });
  }

  async jobHeartbeat(params: HeartbeatParams): Promise<HeartbeatResult> {
    const { workerId, leases, leaseMs } = checkHeartbeatParams(params);
    const now = this.clock.now();
    const renewed: HeartbeatResult['renewed'][number][] = [];
    const lost: HeartbeatResult['lost'][number][] = [];
    for (const lease of leases) {
      const row = this.jobs.get(lease.jobId);
      const result = row && this.rules.transition(row, { kind: 'heartbeat', workerId, attempt: lease.attempt, leaseMs }, now);
      if (row && result?.ok) {
        const next = this.store(row, result.next, result.effects);
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
    const due = [...this.jobs.values()].filter((row) => this.rules.needsSweep(row, now)).slice(0, limit);
    return due.map((row) => {
      const next = this.apply(row, { kind: 'expire' }, now);
      return { jobId: next.id, attempt: next.attempt, state: next.state };
    });
  }

  async jobReplay(params: JobActionParams): Promise<JobRecord> {
    const { jobId, ...options } = paramsOf('jobReplay', params, '{ jobId, actor? }');
    const actor = actorOf(options);
    const job = replayResult(this.replayJob(jobId));
    this.audit({ actor, action: 'job.replay', target: job.id });
    return job;
  }

  async jobCancel(params: JobActionParams): Promise<CancelResult> {
    const { jobId, ...options } = paramsOf('jobCancel', params, '{ jobId, actor? }');
    const actor = actorOf(options);
    const result = cancelResult(this.operator(jobId, { kind: 'cancel' }));
    this.audit({ actor, action: 'job.cancel', target: result.job.id, detail: { outcome: result.outcome } });
    return result;
  }

  /** Replays a job; the schedule it stopped, if any, mints again. */
  private replayJob(jobId: string): OperatorTransition {
    guardReplayMemory(this.jobs.get(assertUuid(jobId, 'jobId')), this.jobs.values());
    const outcome = this.operator(jobId, { kind: 'replay' });
    const schedule = outcome.after.scheduleId === null ? undefined : this.schedules.get(outcome.after.scheduleId);
    if (outcome.result.ok && schedule?.state === 'dead_lettered' && schedule.haltedJobId === outcome.after.id) {
      this.schedules.set(schedule.id, { ...schedule, state: 'active', haltedJobId: null, updatedAt: this.clock.now() });
    }
    return outcome;
  }

  async jobGet(params: JobRef): Promise<JobRecord | null> {
    const { jobId } = paramsOf('jobGet', params, '{ jobId }');
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

  async queuePause(params: QueueActionParams): Promise<void> {
    const { queue, ...options } = paramsOf('queuePause', params, '{ queue, actor? }');
    const actor = actorOf(options);
    this.pausedQueues.add(assertQueueName(queue));
    this.audit({ actor, action: 'queue.pause', target: queue });
  }

  async queueResume(params: QueueActionParams): Promise<void> {
    const { queue, ...options } = paramsOf('queueResume', params, '{ queue, actor? }');
    const actor = actorOf(options);
    this.pausedQueues.delete(assertQueueName(queue));
    this.knownQueues.add(queue);
    this.audit({ actor, action: 'queue.resume', target: queue });
  }

  async queueList(): Promise<QueueSummary[]> {
    const rows: QueueCountRow[] = [...this.knownQueues, ...this.pausedQueues].map((name) => ({ name, paused: this.pausedQueues.has(name), state: null, count: null }));
    for (const row of this.jobs.values()) rows.push({ name: row.queue, paused: false, state: row.state, count: 1 });
    return queueSummaries(rows);
  }


  async scheduleGet(params: ScheduleRef): Promise<Schedule | null> {
    const { scheduleId } = paramsOf('scheduleGet', params, '{ scheduleId }');
    const row = this.schedules.get(assertUuid(scheduleId, 'scheduleId'));
    return row ? toSchedule(row) : null;
  }

  async scheduleList(): Promise<Schedule[]> {
    return (await this.scheduleTxObject().listSchedules()).map(toSchedule);
  }







  async auditList(params?: AuditListParams): Promise<AuditRecord[]> {
    optionalParamsOf('auditList', params, '{ limit? }');
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

  async jobParentOutput(params: ParentOutputParams): Promise<ParentOutput> {
    const { jobId, ancestorId } = paramsOf('jobParentOutput', params, '{ jobId, ancestorId }');
    const id = assertUuid(jobId, 'jobId');
    const ancestor = assertUuid(ancestorId, 'ancestorId');
    const seen = new Set<string>();
    const stack = [...(this.parents.get(id) ?? [])];
    while (stack.length > 0) {
      const next = stack.pop()!;
      if (next === ancestor) {
        const row = this.jobs.get(ancestor);
        return row && row.output !== null ? { found: true, output: JSON.parse(row.output) as unknown } : { found: false, output: undefined };
      }
      if (seen.has(next)) continue;
      seen.add(next);
      stack.push(...(this.parents.get(next) ?? []));
    }
    return { found: false, output: undefined };
  }

  /** Every edge settles the moment its parent finishes here, so there is never anything left over. */
  async jobSettleDependencies(params: SettleDependenciesParams): Promise<number> {
    paramsOf('jobSettleDependencies', params, '{ limit }');
    assertPositiveInteger(params?.limit, 'limit', MAX_BATCH);
    return 0;
  }

  async concurrencyLimitSet(params: ConcurrencyLimitSetParams): Promise<void> {
    const { target, max, ...options } = paramsOf('concurrencyLimitSet', params, '{ target, max, actor? }');
    const actor = actorOf(options);
    const key = limitKey(target);
    if (max === null) this.concurrencyLimits.delete(key);
    else this.concurrencyLimits.set(key, assertLimitMax(max));
    this.audit({ actor, action: 'limit.set', target: key, detail: { max } });
  }

  async concurrencyLimitList(): Promise<ConcurrencyLimit[]> {
    return [...this.concurrencyLimits].sort(([a], [b]) => a.localeCompare(b)).map(([key, max]) => limitOf(key, max));
  }

  async jobHistory(params: JobRef): Promise<HistoryEntry[]> {
    const { jobId } = paramsOf('jobHistory', params, '{ jobId }');
    const id = assertUuid(jobId, 'jobId');
    return this.history.filter((entry) => entry.jobId === id);
  }

  async historyRead(params: HistoryReadParams): Promise<HistoryEntry[]> {
    const { after, limit } = checkHistoryRead(params, SERIAL_POSITION, '0');
    return this.history.filter((entry) => entry.id > Number(after)).slice(0, limit);
  }

  async historyTrim(params: HistoryTrimParams): Promise<number> {
    paramsOf('historyTrim', params, '{ keep, limit }');
    const keep = assertPositiveInteger(params?.keep, 'keep');
    const limit = assertPositiveInteger(params?.limit, 'limit', 100_000);
    const floor = Math.min(...[...this.cursors.values()].map((c) => c.lastId), Number.POSITIVE_INFINITY);
    const perJob = new Map<string, number>();
    const drop = new Set<number>();
    for (let i = this.history.length - 1; i >= 0; i--) {
      const entry = this.history[i]!;
      const count = (perJob.get(entry.jobId) ?? 0) + 1;
      perJob.set(entry.jobId, count);
      if (count > keep && entry.id <= floor && drop.size < limit) drop.add(entry.id);
    }
    this.removeHistory((entry) => drop.has(entry.id));
    return drop.size;
  }

  async observerLease(params: ObserverLeaseParams): Promise<ObserverLease | null> {
    const { observer, workerId, leaseMs } = checkObserverLease(params);
    const now = this.clock.now();
    const tail = this.history.at(-1)?.id ?? 0;
    const cursor = this.cursors.get(observer) ?? { lastId: tail, leasedBy: null, leasedUntil: null, failures: 0, retryAt: null, lastError: null };
    const heldByOther = cursor.leasedBy !== null && cursor.leasedBy !== workerId && cursor.leasedUntil !== null && cursor.leasedUntil > now;
    if (heldByOther || (cursor.retryAt !== null && cursor.retryAt > now)) return null;
    this.cursors.set(observer, { ...cursor, leasedBy: workerId, leasedUntil: now + leaseMs });
    return { observer, position: String(cursor.lastId), failures: cursor.failures };
  }

  async observerCommit(params: ObserverCommitParams): Promise<boolean> {
    const { observer, workerId, position } = checkObserverCommit(params, SERIAL_POSITION);
    const lastId = Number(position);
    const cursor = this.heldCursor(observer, workerId);
    if (!cursor) return false;
    if (lastId > cursor.lastId) cursor.lastId = lastId;
    cursor.failures = 0;
    cursor.retryAt = null;
    cursor.lastError = null;
    return true;
  }

  async observerFail(params: ObserverFailParams): Promise<boolean> {
    const { observer, workerId, error, retryDelayMs } = checkObserverFail(params, this.limits.maxErrorBytes);
    const cursor = this.heldCursor(observer, workerId);
    if (!cursor) return false;
    cursor.failures += 1;
    cursor.retryAt = this.clock.now() + retryDelayMs;
    cursor.lastError = error;
    cursor.leasedBy = null;
    cursor.leasedUntil = null;
    return true;
  }

  async jobPurge(params: PurgeParams): Promise<number> {
    paramsOf('jobPurge', params, '{ olderThanMs, limit }');
    const olderThanMs = assertDelayMs(params?.olderThanMs, 'olderThanMs');
    const limit = assertPositiveInteger(params?.limit, 'limit', 100_000);
    const cutoff = this.clock.now() - olderThanMs;
    const doomed = [...this.jobs.values()]
      .filter((row) => (row.state === 'succeeded' || row.state === 'cancelled') && row.finishedAt !== null && row.finishedAt < cutoff)
      .filter((row) => !(this.children.get(row.id) ?? []).some((edge) => !edge.settled))
      .slice(0, limit);
    const ids = new Set(doomed.map((row) => row.id));
    for (const id of ids) {
      this.jobs.delete(id);
      this.children.delete(id);
      this.parents.delete(id);
    }
    for (const [parent, edges] of this.children) this.children.set(parent, edges.filter((edge) => !ids.has(edge.childId)));
    this.removeHistory((entry) => ids.has(entry.jobId));
    return ids.size;
  }

  /** Every history entry, for oracles and tests. */
  historyEntries(): HistoryEntry[] {
    return [...this.history];
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
    const result = this.rules.transition(before, event, this.clock.now());
    const after = result.ok ? this.store(before, result.next, result.effects) : before;
    return { before, after, result };
  }

  private fenced(jobId: string, attempt: number, event: JobEvent, now: number): OutcomeResult {
    const row = this.jobs.get(jobId);
    const result = row && this.rules.transition(row, event, now);
    if (!row || !result?.ok) return { jobId, attempt, status: 'stale' };
    return { jobId, attempt, status: 'applied', state: this.store(row, result.next, result.effects).state };
  }

  private apply(row: JobRow, event: JobEvent, now: number): JobRow {
    const result = this.rules.transition(row, event, now);
    if (!result.ok) throw new Error(`BUG: ${event.kind} rejected for a job selected as eligible (${result.rejection}).`);
    return this.store(row, result.next, result.effects);
  }

  private store(row: JobRow, next: LifecycleFields, effects: readonly Effect[] = []): JobRow {
    const updated: JobRow = { ...row, ...next };
    this.jobs.set(row.id, updated);
    this.probe.rowWritten?.(row, updated);
    for (const effect of effects) {
      switch (effect.type) {
        case 'wake':
          this.hints.emit(updated.queue);
          break;
        case 'halt_schedule':
          if (updated.scheduleId !== null) this.haltSchedule(updated.scheduleId, updated.id);
          break;
        case 'history':
          this.record(updated, effect.error);
          break;
        case 'settle_dependants':
          this.settleDependants(updated);
          break;
        case 'release_slots':
          if (this.slotHolders.delete(updated.id)) this.probe.slotReleased?.(updated.id);
          break;
      }
    }
    return updated;
  }

  /** Appends a history entry, as the policy allows. */
  private record(row: JobRow, error: string | null): void {
    if (this.historyPolicy === 'off') return;
    const id = this.nextHistoryId++;
    const entry: HistoryEntry = {
      id,
      position: String(id),
      jobId: row.id,
      name: row.name,
      at: new Date(this.clock.now()),
      state: row.state,
      attempt: row.attempt,
      error: this.historyPolicy === 'transitions_and_errors' ? error : null,
    };
    this.history.push(entry);
    this.probe.historyAppended?.(entry);
  }

  private removeHistory(drop: (entry: HistoryEntry) => boolean): void {
    const kept = this.history.filter((entry) => !drop(entry));
    this.history.length = 0;
    this.history.push(...kept);
  }

  /**
   * A parent finished: settle each of its open edges once. A qualifying end lowers the child's
   * latch (releasing it at zero); a failure cancels an `on_success` child, whose own end settles
   * its dependants in turn. That turn is queued, not recursed into: a cascade is as deep as the
   * graph, and a chain of thousands must not exhaust the call stack.
   */
  private settleDependants(parent: JobRow): void {
    if (this.cascade) {
      this.cascade.push(parent);
      return;
    }
    const queue = [parent];
    this.cascade = queue;
    try {
      for (let i = 0; i < queue.length; i++) this.settleEdgesOf(queue[i]!);
    } finally {
      this.cascade = null;
    }
  }

  private settleEdgesOf(parent: JobRow): void {
    const now = this.clock.now();
    for (const edge of this.children.get(parent.id) ?? []) {
      if (edge.settled) continue;
      edge.settled = true;
      this.probe.edgeSettled?.(parent.id, edge.childId);
      const child = this.jobs.get(edge.childId);
      if (!child || child.state !== 'awaiting_parents') continue;
      if (parent.state === 'succeeded' || child.dependencyMode === 'on_any_terminal') {
        const pendingParents = child.pendingParents - 1;
        const lowered = { ...child, pendingParents };
        this.jobs.set(child.id, lowered);
        this.probe.rowWritten?.(child, lowered);
        if (pendingParents <= 0) this.apply(lowered, { kind: 'release' }, now);
      } else {
        this.apply(child, { kind: 'cascade_cancel', parentId: parent.id, parentState: parent.state }, now);
      }
    }
  }

  /** Keeps the claim order, dropping candidates whose queue or key is at its cap. */
  private withinLimits(candidates: readonly JobRow[], now: number, limit: number): JobRow[] {
    if (this.concurrencyLimits.size === 0) return candidates.slice(0, limit);
    const keysOf = (row: JobRow) => limitKeysOf(row.queue, row.concurrencyKey);
    const running = new Map<string, number>();
    for (const row of this.jobs.values()) {
      if (row.state !== 'running' || row.leasedUntil === null || row.leasedUntil <= now || !this.slotHolders.has(row.id)) continue;
      for (const key of keysOf(row)) running.set(key, (running.get(key) ?? 0) + 1);
    }
    return pickWithinLimits(candidates, keysOf, this.concurrencyLimits, running, limit);
  }

  private heldCursor(observer: string, workerId: string): MemoryCursor | null {
    const cursor = this.cursors.get(observer);
    const now = this.clock.now();
    if (!cursor || cursor.leasedBy !== workerId || cursor.leasedUntil === null || cursor.leasedUntil <= now) return null;
    return cursor;
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
