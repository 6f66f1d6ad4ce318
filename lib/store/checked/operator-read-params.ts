import { assertInstant, assertPositiveInteger, assertQueueName, assertUuid, InvalidArgumentError, showValue } from '../../core/index.js';
import type { HistoryScanParams, JobEdgesParams, JobHistoryParams, JobThroughputParams, LimitHoldersParams, LimitListParams, ObserverListParams, QueueListParams, QueueOldestDueParams } from '../job-store.types.js';
import {
  DEFAULT_HISTORY_SCAN,
  type DriverHistoryScanParams,
  MAX_HISTORY_SCAN,
  DEFAULT_EDGE_LIMIT,
  DEFAULT_HOLDER_LIMIT,
  DEFAULT_OBSERVER_LIST_LIMIT,
  DUE_SCAN_LIMIT,
  MAX_BUCKET_MS,
  MIN_BUCKET_MS,
  OBSERVER_LAG_LIMIT,
  THROUGHPUT_SCAN_LIMIT,
  type DriverEdgesParams,
  type DriverHistoryParams,
  type DriverHoldersParams,
  type DriverLimitListParams,
  type DriverObserverListParams,
  type DriverOldestDueParams,
  type DriverQueueListParams,
  type DriverThroughputParams,
} from '../operator-reads.js';
import { limitKey } from './effect-params.js';
import { MAX_BATCH, optionalParamsOf, paramsOf } from './store-params.js';

/** Checks a job-edges read: a UUID, and at most {@link MAX_BATCH} edges per side ({@link DEFAULT_EDGE_LIMIT} when absent). */
export function checkEdgesParams(params: JobEdgesParams): DriverEdgesParams {
  const p = paramsOf('jobEdges', params, '{ jobId, limit? }');
  return { id: assertUuid(p.jobId, 'jobId'), limit: p.limit === undefined ? DEFAULT_EDGE_LIMIT : assertPositiveInteger(p.limit, 'limit', MAX_BATCH) };
}

/** Checks a limit-holders read: a `{ queue }` or `{ key }` target, and at most {@link MAX_BATCH} holders. */
export function checkHoldersParams(params: LimitHoldersParams): DriverHoldersParams {
  const p = paramsOf('limitHolders', params, '{ target, limit? }');
  return { key: limitKey(p.target), limit: p.limit === undefined ? DEFAULT_HOLDER_LIMIT : assertPositiveInteger(p.limit, 'limit', MAX_BATCH) };
}

/** Checks an oldest-due read: at most {@link MAX_BATCH} queue names, each valid, duplicates dropped. */
export function checkOldestDueParams(params: QueueOldestDueParams | undefined): DriverOldestDueParams {
  const p = optionalParamsOf('queueOldestDue', params, '{ queues? }') ?? {};
  if (p.queues === undefined) return { queues: null, scan: DUE_SCAN_LIMIT };
  if (!Array.isArray(p.queues) || p.queues.length > MAX_BATCH) {
    throw new InvalidArgumentError(`queues must be an array of at most ${MAX_BATCH} queue names.`, 'queues');
  }
  const queues = p.queues.map((queue: unknown, i) => assertQueueName(queue, `queues[${i}]`));
  return { queues: [...new Set(queues)], scan: DUE_SCAN_LIMIT };
}

/** Checks a throughput read: a valid `since`, a bucket from {@link MIN_BUCKET_MS} to {@link MAX_BUCKET_MS}, an optional queue. */
export function checkThroughputParams(params: JobThroughputParams): DriverThroughputParams {
  const p = paramsOf('jobThroughput', params, '{ since, bucketMs, queue? }');
  const since = assertInstant(p.since, 'since');
  const bucketMs = p.bucketMs;
  if (typeof bucketMs !== 'number' || !Number.isInteger(bucketMs) || bucketMs < MIN_BUCKET_MS || bucketMs > MAX_BUCKET_MS) {
    throw new InvalidArgumentError(`bucketMs must be a whole number of milliseconds from ${MIN_BUCKET_MS} to ${MAX_BUCKET_MS}, got ${showValue(bucketMs)}.`, 'bucketMs');
  }
  return { since, bucketMs, queue: p.queue === undefined ? null : assertQueueName(p.queue), scan: THROUGHPUT_SCAN_LIMIT };
}

/**
 * Checks an observer listing: at most {@link MAX_BATCH} cursors ({@link DEFAULT_OBSERVER_LIST_LIMIT}
 * when absent), each one's lag counted one entry past {@link OBSERVER_LAG_LIMIT}.
 */
export function checkObserverListParams(params: ObserverListParams | undefined): DriverObserverListParams {
  const p = optionalParamsOf('observerList', params, '{ limit? }') ?? {};
  return {
    limit: p.limit === undefined ? DEFAULT_OBSERVER_LIST_LIMIT : assertPositiveInteger(p.limit, 'limit', MAX_BATCH),
    lagScan: OBSERVER_LAG_LIMIT + 1,
  };
}

/** Checks a queue listing: none (every queue), a page of 1 to {@link MAX_BATCH} names after a queue name, or up to {@link MAX_BATCH} named queues. */
export function checkQueueListParams(params: QueueListParams | undefined): DriverQueueListParams {
  const p = optionalParamsOf('queueList', params, '{ limit?, after?, queues? }');
  if (p === undefined || (p.limit === undefined && p.after === undefined && p.queues === undefined)) return { kind: 'all' };
  if (p.queues !== undefined) {
    if (p.limit !== undefined || p.after !== undefined) throw new InvalidArgumentError('queueList takes either queues, or limit and after, not both.', 'queues');
    return { kind: 'named', queues: checkOldestDueParams({ queues: p.queues }).queues!.slice().sort() };
  }
  if (p.limit === undefined) throw new InvalidArgumentError('queueList takes after only with limit, the size of the page.', 'limit');
  // The empty name sorts before every queue name, so the first page needs no statement of its own.
  return { kind: 'page', limit: assertPositiveInteger(p.limit, 'limit', MAX_BATCH), after: p.after === undefined ? '' : assertQueueName(p.after, 'after') };
}

/** Checks a history read: a UUID, and for a page 1 to {@link MAX_BATCH} entries before an entry id. */
export function checkHistoryParams(params: JobHistoryParams): DriverHistoryParams {
  const p = paramsOf('jobHistory', params, '{ jobId, limit?, before? }');
  const jobId = assertUuid(p.jobId, 'jobId');
  if (p.limit === undefined) {
    if (p.before !== undefined) throw new InvalidArgumentError('jobHistory takes before only with limit, the size of the page.', 'limit');
    return { jobId, limit: null, before: null };
  }
  return { jobId, limit: assertPositiveInteger(p.limit, 'limit', MAX_BATCH), before: p.before === undefined ? null : assertPositiveInteger(p.before, 'before') };
}

/** Checks a history scan: a page of 1 to {@link MAX_HISTORY_SCAN} entries, after an entry given by its job id and id. */
export function checkHistoryScanParams(params: HistoryScanParams | undefined): DriverHistoryScanParams {
  const p = optionalParamsOf('historyScan', params, '{ limit?, after? }') ?? {};
  const limit = p.limit === undefined ? DEFAULT_HISTORY_SCAN : assertPositiveInteger(p.limit, 'limit', MAX_HISTORY_SCAN);
  if (p.after === undefined) return { limit, afterJobId: null, afterId: 0 };
  const after = paramsOf('historyScan after', p.after, '{ jobId, id }');
  return { limit, afterJobId: assertUuid(after.jobId, 'after.jobId'), afterId: assertPositiveInteger(after.id, 'after.id') };
}

/** Checks a limit listing: every limit, or a page of 1 to {@link MAX_BATCH} after a target (as its storage key). */
export function checkLimitListParams(method: 'concurrencyLimitList' | 'rateLimitList', params: LimitListParams | undefined): DriverLimitListParams {
  const p = optionalParamsOf(method, params, '{ limit?, after? }') ?? {};
  if (p.limit === undefined) {
    if (p.after !== undefined) throw new InvalidArgumentError(`${method} takes after only with limit, the size of the page.`, 'limit');
    return { limit: null, after: '' };
  }
  return { limit: assertPositiveInteger(p.limit, 'limit', MAX_BATCH), after: p.after === undefined ? '' : limitKey(p.after, method === 'rateLimitList' ? 'A rate limit' : 'A concurrency limit', ['max', 'perMs']) };
}
