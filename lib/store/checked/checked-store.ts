import {
  assertDelayMs,
  assertPositiveInteger,
  assertQueueName,
  assertUuid,
  InvalidArgumentError,
  assertRate,
  type HistoryPolicy,
  type JobRecord,
  type JobState,
  type SchedulerLimits,
} from '../../core/index.js';
import { normalizeEnqueueMany } from '../enqueue-input.js';
import {
  assertLimitMax,
  checkHistoryRead,
  checkObserverCommit,
  checkObserverFail,
  checkObserverLease,
  limitKey,
} from './effect-params.js';
import type {
  AttemptTransaction,
  AuditListParams,
  AuditRecord,
  CancelResult,
  ClaimParams,
  CompleteParams,
  ConcurrencyLimit,
  ConcurrencyLimitSetParams,
  FinishHintParams,
  RateLimit,
  RateLimitSetParams,
  RateLimitStatus,
  EnqueueManyParams,
  EnqueueParams,
  EnqueueResult,
  ExpiredLease,
  ExpireLeasesParams,
  HeartbeatParams,
  HeartbeatResult,
  HistoryEntry,
  HistoryReadParams,
  HistoryTrimParams,
  HistoryTrimResult,
  MaintenanceLeaseParams,
  NodeBeatParams,
  NodeListParams,
  NodePruneParams,
  NodeRecord,
  NodeRef,
  ScheduleListParams,
  JobActionParams,
  JobCancelParams,
  JobCountsFoldParams,
  JobCountTotals,
  JobEdges,
  JobEdgesParams,
  JobThroughput,
  JobThroughputParams,
  LimitHolders,
  LimitTarget,
  LimitHoldersParams,
  LimitListParams,
  QueueListParams,
  QueueOldestDueParams,
  QueueOldestDueResult,
  JobPage,
  JobHistoryParams,
  JobRef,
  JobStatus,
  JobStatusManyParams,
  JobStats,
  JobStore,
  ListDeadLetteredParams,
  ListJobsParams,
  MintDueParams,
  ObserverCommitParams,
  ObserverFailParams,
  ObserverLease,
  ObserverLeaseParams,
  ObserverListParams,
  ObserverStatus,
  OutcomeResult,
  ParentOutput,
  ParentOutputParams,
  PurgeParams,
  QueueActionParams,
  QueueSummary,
  RelinquishParams,
  ScheduleActionParams,
  ScheduleRef,
  ScheduleUpsertParams,
  SettleDependenciesParams,
  WakeHintParams,
  WakeSubscription,
} from '../job-store.types.js';
import { checkNodeBeatParams, checkNodeListParams, checkNodePruneParams, checkNodeRef } from './node-params.js';
import { actorOf, checkOnlyFrom } from './operator-options.js';
import { cancelResult, replayResult , runNowResult } from './operator-transition.js';
import { normalizeSchedule } from '../schedules/schedule-input.js';
import {
  mintDue,
  pauseSchedule,
  removeSchedule,
  replaySchedule,
  resumeSchedule,
  triggerSchedule,
  upsertSchedule,
} from '../schedules/schedule-operations.js';
import type { ScheduleTx } from '../schedules/schedule-tx.js';
import type { MintResult, Schedule, ScheduleReplayResult, ScheduleUpsertResult } from '../schedules/schedule.types.js';
import type { StoreCapabilities } from '../store-capabilities.js';
import {
  checkClaimParams,
  checkCompleteParams,
  checkDeadLetterListParams,
  checkExpireParams,
  checkJobStatusIds,
  checkHeartbeatParams,
  checkListParams,
  checkMaintenanceLeaseParams,
  checkRelinquishParams,
  checkScheduleListParams,
  MAX_BATCH,
  optionalParamsOf,
  paramsOf,
} from './store-params.js';
import type { StoreDriver } from './store-driver.js';
import type { DriverListParams } from '../job-page.js';
import { cutEdges, OBSERVER_LAG_LIMIT, throughputResult, toObserverStatus } from '../operator-reads.js';
import {
  checkEdgesParams,
  checkHistoryParams,
  checkHoldersParams,
  checkLimitListParams,
  checkObserverListParams,
  checkOldestDueParams,
  checkQueueListParams,
  checkThroughputParams,
} from './operator-read-params.js';

/** The most rows one retention pass (purge or history trim) may delete. */
const MAX_CLEANUP_BATCH = 100_000;

/**
 * The contract, implemented once over a {@link StoreDriver}: every method checks its params, fills
 * in the defaults, composes the audit entry, and then calls the driver, which only talks to its
 * database. Bad input is refused here, before the driver sees it, so every adapter refuses it with
 * the same error. Adapters extend this class with a constructor that builds their driver.
 */
export class CheckedStore implements JobStore {
  constructor(protected readonly driver: StoreDriver) {}

  get capabilities(): StoreCapabilities {
    return this.driver.capabilities;
  }

  get limits(): SchedulerLimits {
    return this.driver.limits;
  }

  get historyPolicy(): HistoryPolicy {
    return this.driver.historyPolicy;
  }

  migrate(): Promise<void> {
    return this.driver.migrate();
  }

  schemaVersion(): Promise<number | null> {
    return this.driver.schemaVersion();
  }

  close(): Promise<void> {
    return this.driver.close();
  }

  beginAttempt(): AttemptTransaction {
    return this.driver.beginAttempt({
      checkSuccess: (workerId, jobId, attempt, output) =>
        checkCompleteParams({ workerId, outcomes: [{ jobId, attempt, kind: 'succeeded', output }] }, this.limits),
    });
  }

  async subscribeWakeHints(params: WakeHintParams): Promise<WakeSubscription> {
    return this.driver.subscribeWakeHints(paramsOf('subscribeWakeHints', params, '{ listener }').listener);
  }

  async jobEnqueue(params: EnqueueParams): Promise<EnqueueResult> {
    const { job, manager } = paramsOf('jobEnqueue', params, '{ job, manager? }');
    const [result] = await this.jobEnqueueMany({ jobs: [job], manager });
    return result!;
  }

  async jobEnqueueMany(params: EnqueueManyParams): Promise<EnqueueResult[]> {
    const { jobs, manager } = paramsOf('jobEnqueueMany', params, '{ jobs, manager? }');
    return this.driver.jobEnqueueMany({ jobs: normalizeEnqueueMany(jobs, this.limits), manager });
  }

  async jobClaim(params: ClaimParams): Promise<JobRecord[]> {
    return this.driver.jobClaim(checkClaimParams(params));
  }

  async jobHeartbeat(params: HeartbeatParams): Promise<HeartbeatResult> {
    return this.driver.jobHeartbeat(checkHeartbeatParams(params, this.limits));
  }

  async jobCompleteMany(params: CompleteParams): Promise<OutcomeResult[]> {
    return this.driver.jobCompleteMany(checkCompleteParams(params, this.limits));
  }

  async jobRelinquishMany(params: RelinquishParams): Promise<OutcomeResult[]> {
    return this.driver.jobRelinquishMany(checkRelinquishParams(params));
  }

  async jobExpireLeases(params: ExpireLeasesParams): Promise<ExpiredLease[]> {
    return this.driver.jobExpireLeases({ limit: checkExpireParams(params) });
  }

  async jobParentOutput(params: ParentOutputParams): Promise<ParentOutput> {
    const { jobId, ancestorId } = paramsOf('jobParentOutput', params, '{ jobId, ancestorId }');
    return this.driver.jobParentOutput({ jobId: assertUuid(jobId, 'jobId'), ancestorId: assertUuid(ancestorId, 'ancestorId') });
  }

  async jobSettleDependencies(params: SettleDependenciesParams): Promise<number> {
    const { limit } = paramsOf('jobSettleDependencies', params, '{ limit }');
    return this.driver.jobSettleDependencies({ limit: assertPositiveInteger(limit, 'limit', MAX_BATCH) });
  }

  async jobGet(params: JobRef): Promise<JobRecord | null> {
    return this.driver.jobGet({ jobId: assertUuid(paramsOf('jobGet', params, '{ jobId }').jobId, 'jobId') });
  }

  async jobStatusMany(params: JobStatusManyParams): Promise<JobStatus[]> {
    const jobIds = checkJobStatusIds(params);
    return jobIds.length === 0 ? [] : this.driver.jobStatusMany({ jobIds });
  }

  callerHoldsConnection(): boolean {
    return this.driver.callerHoldsConnection?.() ?? false;
  }

  async jobListPage(params?: ListJobsParams): Promise<JobPage> {
    return this.listPage(checkListParams(params, 'jobListPage'));
  }

  async jobList(params?: ListJobsParams): Promise<JobRecord[]> {
    return (await this.listPage(checkListParams(params))).jobs;
  }

  async jobListDeadLettered(params?: ListDeadLetteredParams): Promise<JobRecord[]> {
    return this.driver.jobListDeadLettered({ limit: checkDeadLetterListParams(params) });
  }

  async jobEdges(params: JobEdgesParams): Promise<JobEdges | null> {
    const checked = checkEdgesParams(params);
    const found = await this.driver.jobEdges(checked);
    if (found === null) return null;
    const parents = cutEdges(found.parents, checked.limit);
    const dependants = cutEdges(found.dependants, checked.limit);
    return { parents: parents.jobs, parentsTruncated: parents.truncated, dependants: dependants.jobs, dependantsTruncated: dependants.truncated };
  }

  async limitHolders(params: LimitHoldersParams): Promise<LimitHolders> {
    const checked = checkHoldersParams(params);
    const { max, holders } = await this.driver.limitHolders(checked);
    return { max, holders: holders.slice(0, checked.limit), truncated: holders.length > checked.limit };
  }

  async queueOldestDue(params?: QueueOldestDueParams): Promise<QueueOldestDueResult> {
    const checked = checkOldestDueParams(params);
    const found = await this.driver.queueOldestDue(checked);
    const names = checked.queues ?? [...found.oldest.keys()].sort();
    return {
      queues: names.map((queue) => ({ queue, oldestDueAt: found.oldest.has(queue) ? new Date(found.oldest.get(queue)!) : null, dueCount: found.due.get(queue) ?? 0 })),
      dueExamined: found.examined,
      examinedUntil: found.examined >= checked.scan && found.last !== null ? new Date(found.last) : null,
      now: new Date(found.now),
    };
  }

  async jobThroughput(params: JobThroughputParams): Promise<JobThroughput> {
    const checked = checkThroughputParams(params);
    return throughputResult(checked, await this.driver.jobThroughput(checked));
  }

  async jobHistory(params: JobHistoryParams): Promise<HistoryEntry[]> {
    return this.driver.jobHistory(checkHistoryParams(params));
  }

  async jobStats(): Promise<JobStats> {
    return this.driver.jobStats();
  }

  async queueList(params?: QueueListParams): Promise<QueueSummary[]> {
    return this.driver.queueList(checkQueueListParams(params));
  }

  async jobCountTotals(): Promise<JobCountTotals> {
    return this.driver.jobCountTotals();
  }

  async concurrencyLimitList(params?: LimitListParams): Promise<ConcurrencyLimit[]> {
    return this.driver.concurrencyLimitList(checkLimitListParams('concurrencyLimitList', params));
  }

  async subscribeFinishHints(params: FinishHintParams): Promise<WakeSubscription> {
    const { listener } = paramsOf('subscribeFinishHints', params, '{ listener }');
    if (typeof listener !== 'function') throw new InvalidArgumentError('listener must be a function.', 'listener');
    return this.driver.subscribeFinishHints(listener);
  }

  async rateLimitList(params?: LimitListParams): Promise<RateLimit[]> {
    return this.driver.rateLimitList(checkLimitListParams('rateLimitList', params));
  }

  async rateLimitStatus(params: { readonly target: LimitTarget }): Promise<RateLimitStatus | null> {
    return this.driver.rateLimitStatus({ key: limitKey(paramsOf('rateLimitStatus', params, '{ target }').target, 'A rate limit') });
  }

  async auditList(params?: AuditListParams): Promise<AuditRecord[]> {
    return this.driver.auditList({ limit: checkDeadLetterListParams(optionalParamsOf('auditList', params, '{ limit? }')) });
  }

  async jobReplay(params: JobActionParams): Promise<JobRecord> {
    const checked = paramsOf('jobReplay', params, '{ jobId, actor? }');
    const jobId = assertUuid(checked.jobId, 'jobId');
    const actor = actorOf(checked);
    return this.driver.jobReplay({ jobId, write: { decide: replayResult, audit: () => ({ actor, action: 'job.replay', target: jobId }) } });
  }

  async jobCancel(params: JobCancelParams): Promise<CancelResult> {
    const checked = paramsOf('jobCancel', params, '{ jobId, actor?, onlyFrom? }');
    const jobId = assertUuid(checked.jobId, 'jobId');
    const actor = actorOf(checked);
    const onlyFrom = checkOnlyFrom(checked.onlyFrom);
    let from: JobState | undefined;
    return this.driver.jobCancel({
      jobId,
      onlyFrom,
      write: {
        decide: (transition) => {
          from = transition.before.state;
          return cancelResult(transition, onlyFrom);
        },
        // `from` tells a discarded dead letter from the cancel of a waiting job.
        audit: (result) => ({ actor, action: 'job.cancel', target: jobId, detail: { outcome: result.outcome, from } }),
      },
    });
  }

  async jobRunNow(params: JobActionParams): Promise<JobRecord> {
    const checked = paramsOf('jobRunNow', params, '{ jobId, actor? }');
    const jobId = assertUuid(checked.jobId, 'jobId');
    const actor = actorOf(checked);
    return this.driver.jobRunNow({ jobId, write: { decide: runNowResult, audit: () => ({ actor, action: 'job.run_now', target: jobId }) } });
  }

  async queuePause(params: QueueActionParams): Promise<void> {
    await this.setPaused('queuePause', params, true);
  }

  async queueResume(params: QueueActionParams): Promise<void> {
    await this.setPaused('queueResume', params, false);
  }

  async concurrencyLimitSet(params: ConcurrencyLimitSetParams): Promise<void> {
    const checked = paramsOf('concurrencyLimitSet', params, '{ target, max, actor? }');
    const key = limitKey(checked.target);
    const max = checked.max === null ? null : assertLimitMax(checked.max);
    const actor = actorOf(checked);
    await this.driver.concurrencyLimitSet({ key, max, audit: { actor, action: 'limit.set', target: key, detail: { max } } });
  }

  async rateLimitSet(params: RateLimitSetParams): Promise<void> {
    const checked = paramsOf('rateLimitSet', params, '{ target, rate, actor? }');
    const key = limitKey(checked.target, 'A rate limit');
    const rate = checked.rate === null ? null : assertRate(checked.rate, 'rate');
    const actor = actorOf(checked);
    await this.driver.rateLimitSet({ key, rate, audit: { actor, action: 'rate_limit.set', target: key, detail: { rate } } });
  }

  async scheduleUpsert(params: ScheduleUpsertParams): Promise<ScheduleUpsertResult> {
    const checked = paramsOf('scheduleUpsert', params, '{ schedule, actor? }');
    const definition = normalizeSchedule(checked.schedule, this.limits);
    const actor = actorOf(checked);
    return this.driver.scheduleTx((tx) => upsertSchedule(tx, definition, actor));
  }

  async scheduleGet(params: ScheduleRef): Promise<Schedule | null> {
    return this.driver.scheduleGet({ scheduleId: assertUuid(paramsOf('scheduleGet', params, '{ scheduleId }').scheduleId, 'scheduleId') });
  }

  async scheduleList(params?: ScheduleListParams): Promise<Schedule[]> {
    const checked = checkScheduleListParams(params);
    const page = await this.driver.scheduleList(checked);
    if (page === null) {
      throw new InvalidArgumentError(`after names schedule ${checked.after}, which is not stored; start again from the first page.`, 'after');
    }
    return page;
  }

  async schedulePause(params: ScheduleActionParams): Promise<Schedule> {
    return this.scheduleAction('schedulePause', params, pauseSchedule);
  }

  async scheduleResume(params: ScheduleActionParams): Promise<Schedule> {
    return this.scheduleAction('scheduleResume', params, resumeSchedule);
  }

  async scheduleTrigger(params: ScheduleActionParams): Promise<EnqueueResult> {
    return this.scheduleAction('scheduleTrigger', params, triggerSchedule);
  }

  async scheduleRemove(params: ScheduleActionParams): Promise<boolean> {
    return this.scheduleAction('scheduleRemove', params, removeSchedule);
  }

  async scheduleReplay(params: ScheduleActionParams): Promise<ScheduleReplayResult> {
    return this.scheduleAction('scheduleReplay', params, replaySchedule);
  }

  async scheduleMintDue(params: MintDueParams): Promise<MintResult> {
    const limit = assertPositiveInteger(paramsOf('scheduleMintDue', params, '{ limit }').limit, 'limit', MAX_BATCH);
    return this.driver.scheduleTx((tx) => mintDue(tx, limit));
  }

  async historyRead(params: HistoryReadParams): Promise<HistoryEntry[]> {
    const { shape, start } = this.driver.positions;
    return this.driver.historyRead(checkHistoryRead(params, shape, start));
  }

  async maintenanceLease(params: MaintenanceLeaseParams): Promise<boolean> {
    return this.driver.maintenanceLease(checkMaintenanceLeaseParams(params));
  }

  async historyTrim(params: HistoryTrimParams): Promise<HistoryTrimResult> {
    const checked = paramsOf('historyTrim', params, '{ keep, limit }');
    const keep = assertPositiveInteger(checked.keep, 'keep');
    return this.driver.historyTrim({ keep, limit: assertPositiveInteger(checked.limit, 'limit', MAX_CLEANUP_BATCH) });
  }

  async jobPurge(params: PurgeParams): Promise<number> {
    const checked = paramsOf('jobPurge', params, '{ olderThanMs, limit }');
    const olderThanMs = assertDelayMs(checked.olderThanMs, 'olderThanMs');
    return this.driver.jobPurge({ olderThanMs, limit: assertPositiveInteger(checked.limit, 'limit', MAX_CLEANUP_BATCH) });
  }

  async jobCountsFold(params: JobCountsFoldParams): Promise<number> {
    const { limit } = paramsOf('jobCountsFold', params, '{ limit }');
    return this.driver.jobCountsFold({ limit: assertPositiveInteger(limit, 'limit', MAX_CLEANUP_BATCH) });
  }

  async observerLease(params: ObserverLeaseParams): Promise<ObserverLease | null> {
    return this.driver.observerLease(checkObserverLease(params));
  }

  async observerCommit(params: ObserverCommitParams): Promise<boolean> {
    return this.driver.observerCommit(checkObserverCommit(params, this.driver.positions.shape));
  }

  async observerFail(params: ObserverFailParams): Promise<boolean> {
    return this.driver.observerFail(checkObserverFail(params, this.limits.maxErrorBytes));
  }

  async observerList(params?: ObserverListParams): Promise<ObserverStatus[]> {
    const checked = checkObserverListParams(params);
    return (await this.driver.observerList(checked)).map((row) => toObserverStatus(row, OBSERVER_LAG_LIMIT));
  }

  async nodeBeat(params: NodeBeatParams): Promise<void> {
    return this.driver.nodeBeat(checkNodeBeatParams(params));
  }

  async nodeStop(params: NodeRef): Promise<void> {
    return this.driver.nodeStop({ id: checkNodeRef('nodeStop', params) });
  }

  async nodeList(params?: NodeListParams): Promise<NodeRecord[]> {
    return this.driver.nodeList(checkNodeListParams(params));
  }

  async nodePrune(params: NodePruneParams): Promise<number> {
    return this.driver.nodePrune(checkNodePruneParams(params));
  }

  /** A page, or the one sentence that says its cursor names no job: found by reading, so after the checks. */
  private async listPage(params: DriverListParams): Promise<JobPage> {
    const page = await this.driver.jobListPage(params);
    if (page === null) {
      const cursorName = params.order === 'newest' ? 'before' : 'after';
      throw new InvalidArgumentError(
        `${cursorName} names job ${params.cursor}, which is not stored (retention may have deleted it since the page that named it); start again from the first page.`,
        cursorName,
      );
    }
    return page;
  }

  private async setPaused(method: string, params: QueueActionParams, paused: boolean): Promise<void> {
    const checked = paramsOf(method, params, '{ queue, actor? }');
    const queue = assertQueueName(checked.queue);
    const actor = actorOf(checked);
    await this.driver.queueSetPaused({ queue, paused, audit: { actor, action: paused ? 'queue.pause' : 'queue.resume', target: queue } });
  }

  private scheduleAction<T>(method: string, params: ScheduleActionParams, operation: (tx: ScheduleTx, id: string, actor: string) => Promise<T>): Promise<T> {
    const checked = paramsOf(method, params, '{ scheduleId, actor? }');
    const id = assertUuid(checked.scheduleId, 'scheduleId');
    const actor = actorOf(checked);
    return this.driver.scheduleTx((tx) => operation(tx, id, actor));
  }
}
