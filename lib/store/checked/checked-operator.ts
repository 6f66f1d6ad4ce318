import {
  assertPositiveInteger,
  assertQueueName,
  assertUuid,
  InvalidArgumentError,
  assertRate,
  type JobRecord,
  type JobState,
} from '../../core/index.js';
import { assertLimitMax, limitKey } from './effect-params.js';
import type {
  AuditAppendParams,
  AuditListParams,
  AuditRecord,
  CancelResult,
  ConcurrencyLimit,
  ConcurrencyLimitSetParams,
  FinishHintParams,
  RateLimit,
  RateLimitSetParams,
  RateLimitStatus,
  NodeListParams,
  NodeRecord,
  HistoryEntry,
  JobActionParams,
  JobCancelParams,
  JobCountTotals,
  StoreHealth,
  JobEdges,
  JobEdgesParams,
  JobThroughput,
  JobThroughputParams,
  LimitHolders,
  LimitTarget,
  LimitListParams,
  QueueListParams,
  JobHistoryParams,
  HistoryScanParams,
  LimitHoldersParams,
  QueueOldestDueParams,
  QueueOldestDueResult,
  JobPage,
  JobRef,
  JobStatus,
  JobStatusManyParams,
  JobStats,
  ListBlockedSequencesParams,
  ListGroupsParams,
  WaitingGroup,
  BatchCancelParams,
  BatchCancelResult,
  BatchParams,
  BatchSummary,
  ListBatchesParams,
  BlockedSequence,
  ListDeadLetteredParams,
  ListJobsParams,
  ObserverListParams,
  ObserverStatus,
  OperatorStore,
  QueueActionParams,
  QueueSummary,
  WakeSubscription,
} from '../job-store.types.js';
import { CheckedWorker } from './checked-worker.js';
import { cancelBatch, listBatches, readBatch } from '../batch/batch-operator.js';
import { checkNodeListParams } from './node-params.js';
import { actorOf, checkAuditAction, checkAuditEntry, checkOnlyFrom } from './operator-options.js';
import { cancelResult, replayResult, runNowResult } from './operator-transition.js';
import { checkBlockedSequenceParams, checkDeadLetterListParams, DEFAULT_LIST_LIMIT, MAX_BATCH, checkGroupListParams, checkJobStatusIds, checkListParams, optionalParamsOf, paramsOf } from './store-params.js';
import type { DriverListParams } from '../job-page.js';
import { cutEdges, GROUP_COUNT_SCAN, OBSERVER_LAG_LIMIT, throughputResult, toObserverStatus, toWaitingGroup } from '../operator-reads.js';
import {
  checkEdgesParams,
  checkHistoryParams,
  checkHistoryScanParams,
  checkHoldersParams,
  checkLimitListParams,
  checkObserverListParams,
  checkOldestDueParams,
  checkQueueListParams,
  checkThroughputParams,
} from './operator-read-params.js';

/** `CheckedStore`'s operator role: the reads behind the dashboard and the CLI, and the audited actions. */
export class CheckedOperator extends CheckedWorker implements OperatorStore {
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

  async jobListBlockedSequences(params?: ListBlockedSequencesParams): Promise<BlockedSequence[]> {
    return this.driver.jobListBlockedSequences(checkBlockedSequenceParams(params));
  }

  async jobListGroups(params?: ListGroupsParams): Promise<WaitingGroup[]> {
    const rows = await this.driver.jobListGroups({ ...checkGroupListParams(params), countScan: GROUP_COUNT_SCAN });
    return rows.map(toWaitingGroup);
  }

  async jobBatch(params: BatchParams): Promise<BatchSummary | null> {
    return readBatch(this.driver, params);
  }

  async jobListBatches(params?: ListBatchesParams): Promise<BatchSummary[]> {
    return listBatches(this.driver, params);
  }

  async jobCancelBatch(params: BatchCancelParams): Promise<BatchCancelResult> {
    return cancelBatch(this.driver, params, (cancel) => this.jobCancel(cancel));
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

  async historyScan(params?: HistoryScanParams): Promise<HistoryEntry[]> {
    return this.driver.historyScan(checkHistoryScanParams(params));
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

  async storeHealth(): Promise<StoreHealth> {
    if (this.driver.storeHealth) return this.driver.storeHealth();
    return { oldestTransaction: null, horizonXids: null, deadJobRows: null, liveJobRows: null, lastVacuumAt: null };
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
    const p = optionalParamsOf('auditList', params, '{ limit?, action?, before? }');
    const limit = p?.limit === undefined ? DEFAULT_LIST_LIMIT : assertPositiveInteger(p.limit, 'limit', MAX_BATCH);
    const before = p?.before === undefined ? null : assertPositiveInteger(p.before, 'before', Number.MAX_SAFE_INTEGER);
    return this.driver.auditList({ limit, action: p?.action === undefined ? null : checkAuditAction(p.action), before });
  }

  async auditAppend(params: AuditAppendParams): Promise<void> {
    const p = paramsOf('auditAppend', params, '{ action, target, detail?, actor? }');
    await this.driver.auditAppend(checkAuditEntry(p, actorOf(p)));
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

  async observerList(params?: ObserverListParams): Promise<ObserverStatus[]> {
    const checked = checkObserverListParams(params);
    return (await this.driver.observerList(checked)).map((row) => toObserverStatus(row, OBSERVER_LAG_LIMIT));
  }

  async nodeList(params?: NodeListParams): Promise<NodeRecord[]> {
    return this.driver.nodeList(checkNodeListParams(params));
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
}
