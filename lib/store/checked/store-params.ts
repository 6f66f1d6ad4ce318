import {
  assertDelayMs,
  assertInstant,
  assertNonEmptyString,
  assertPositiveInteger,
  assertQueueName,
  assertUuid,
  DEFAULT_LIMITS,
  encodeJson,
  InvalidArgumentError,
  isJobState,
  showValue,
  storableText,
  truncateUtf8,
  type SchedulerLimits,
} from '../../core/index.js';
import type {
  ClaimParams,
  JobStatusManyParams,
  CompleteParams,
  ExpireLeasesParams,
  HeartbeatParams,
  LeaseRef,
  ListBlockedSequencesParams,
  ListGroupsParams,
  ListDeadLetteredParams,
  ListJobsParams,
  MaintenanceLeaseParams,
  Outcome,
  RelinquishParams,
  ScheduleListParams,
} from '../job-store.types.js';
import type { DriverListParams } from '../job-page.js';
import { canonicalIdPrefix } from '../operator-reads.js';
import { MAX_CONCURRENCY_KEY, MAX_SEQUENCE_KEY } from '../enqueue-input.js';
import { optionalParamsOf, paramsOf } from './params-of.js';

// Every checked method starts with these; they live on their own, and are re-exported for the callers that import them from here.
export { optionalParamsOf, paramsOf };

/** Most rows one call may claim, renew, report or list. */
export const MAX_BATCH = 1_000;

/** The most ids one `jobStatusMany` reads: a waiter's poll reads its jobs in batches of this size. */
export const JOB_STATUS_BATCH = MAX_BATCH;

/**
 * Checks the ids of a `jobStatusMany` call (an array of at most {@link JOB_STATUS_BATCH} UUIDs)
 * and returns them canonical and without repeats.
 */
export function checkJobStatusIds(params: JobStatusManyParams): string[] {
  const { jobIds } = paramsOf('jobStatusMany', params, '{ jobIds }');
  if (!Array.isArray(jobIds)) throw new InvalidArgumentError('jobIds must be an array of job ids.', 'jobIds');
  if (jobIds.length > JOB_STATUS_BATCH) {
    throw new InvalidArgumentError(`jobIds may hold at most ${JOB_STATUS_BATCH} ids, got ${jobIds.length}.`, 'jobIds');
  }
  return [...new Set(jobIds.map((id: unknown, i) => assertUuid(id, `jobIds[${i}]`)))];
}
/** Longest lease a claim or heartbeat may ask for: one day. */
export const MAX_LEASE_MS = 86_400_000;
/** Default rows for the listings. */
export const DEFAULT_LIST_LIMIT = 50;

/** An outcome checked and encoded for the fenced write. */
export interface NormalizedOutcome {
  readonly jobId: string;
  readonly attempt: number;
  readonly kind: Outcome['kind'];
  /** Output JSON text for `succeeded`; null otherwise or when none was set. */
  readonly output: string | null;
  /** Error or quarantine reason, cut to the error limit. */
  readonly error: string | null;
  /** A failure's retry delay, or a snooze's delay. */
  readonly retryDelayMs: number;
}

/** Claim parameters as the adapters read them: checked, with the defaults filled in. */
export type CheckedClaimParams = ClaimParams & { readonly includeLapsed: boolean };

/**
 * Frozen queue lists whose names were checked already. A worker passes the same frozen list to
 * every claim, so its names are checked once rather than on every claim: a list of 1,000 names
 * took about 0.2 ms a claim to check again. A frozen array cannot change, so once is enough.
 */
const checkedQueueLists = new WeakSet<readonly string[]>();

/** Checks a claim's params (worker, batch size, queue names, lease length) and defaults `includeLapsed` to true. */
export function checkClaimParams(params: ClaimParams): CheckedClaimParams {
  paramsOf('jobClaim', params, '{ workerId, limit, queues, leaseMs, includeLapsed? }');
  assertNonEmptyString(params.workerId, 'workerId');
  assertPositiveInteger(params.limit, 'limit', MAX_BATCH);
  assertPositiveInteger(params.leaseMs, 'leaseMs', MAX_LEASE_MS);
  if (!Array.isArray(params.queues) || params.queues.length === 0) {
    throw new InvalidArgumentError('queues must be a non-empty array of queue names.', 'queues');
  }
  if (!checkedQueueLists.has(params.queues)) {
    params.queues.forEach((queue, i) => assertQueueName(queue, `queues[${i}]`));
    if (Object.isFrozen(params.queues)) checkedQueueLists.add(params.queues);
  }
  if (params.includeLapsed !== undefined && typeof params.includeLapsed !== 'boolean') {
    throw new InvalidArgumentError('includeLapsed must be true or false when given.', 'includeLapsed');
  }
  return { ...params, includeLapsed: params.includeLapsed ?? true };
}

/** Checks a list of leases (at most {@link MAX_BATCH}, each a UUID and a positive attempt) and returns it as plain objects. */
export function checkLeases(leases: readonly LeaseRef[], argument = 'leases'): LeaseRef[] {
  if (!Array.isArray(leases)) throw new InvalidArgumentError(`${argument} must be an array of { jobId, attempt }.`, argument);
  if (leases.length > MAX_BATCH) throw new InvalidArgumentError(`${argument} may hold at most ${MAX_BATCH} entries, got ${leases.length}.`, argument);
  return leases.map((lease, i) => ({
    jobId: assertUuid(lease?.jobId, `${argument}[${i}].jobId`),
    attempt: assertPositiveInteger(lease?.attempt, `${argument}[${i}].attempt`),
  }));
}

/** A lease to renew, checked, with its progress as JSON text when it carries one. */
export type CheckedHeartbeatLease = LeaseRef & { readonly progress?: string };

/**
 * Checks a heartbeat's params: the worker, its leases and the lease length (at most
 * {@link MAX_LEASE_MS}), and encodes each lease's progress within `maxProgressBytes` and
 * `maxJsonDepth`. `withProgress` says whether any lease carries progress, so a driver picks its
 * plain renewal, unchanged, when none does.
 */
export function checkHeartbeatParams(
  params: HeartbeatParams,
  limits: SchedulerLimits = DEFAULT_LIMITS,
): { workerId: string; leases: CheckedHeartbeatLease[]; leaseMs: number; withProgress: boolean } {
  paramsOf('jobHeartbeat', params, '{ workerId, leases, leaseMs }');
  const workerId = assertNonEmptyString(params.workerId, 'workerId');
  const leases: CheckedHeartbeatLease[] = checkLeases(params.leases);
  const leaseMs = assertPositiveInteger(params.leaseMs, 'leaseMs', MAX_LEASE_MS);
  let withProgress = false;
  params.leases.forEach((lease, i) => {
    if (!('progress' in lease) || lease.progress === undefined) return;
    const argument = `leases[${i}].progress`;
    const progress = encodeJson(lease.progress, { argument, maxBytes: limits.maxProgressBytes, maxDepth: limits.maxJsonDepth });
    leases[i] = { ...leases[i]!, progress };
    withProgress = true;
  });
  return { workerId, leases, leaseMs, withProgress };
}

/** Checks a relinquish's params: the worker and the leases it hands back. */
export function checkRelinquishParams(params: RelinquishParams): { workerId: string; leases: LeaseRef[] } {
  paramsOf('jobRelinquishMany', params, '{ workerId, leases }');
  return { workerId: assertNonEmptyString(params.workerId, 'workerId'), leases: checkLeases(params.leases) };
}

/**
 * Checks a batch of outcome reports (each job once) and normalizes them: an output encoded as JSON
 * within the output limits, an error or quarantine reason cut to `maxErrorBytes`.
 */
export function checkCompleteParams(
  params: CompleteParams,
  limits: SchedulerLimits,
): { workerId: string; outcomes: NormalizedOutcome[] } {
  paramsOf('jobCompleteMany', params, '{ workerId, outcomes }');
  const workerId = assertNonEmptyString(params.workerId, 'workerId');
  if (!Array.isArray(params.outcomes) || params.outcomes.length > MAX_BATCH) {
    throw new InvalidArgumentError(`outcomes must be an array of at most ${MAX_BATCH} reports.`, 'outcomes');
  }
  const seen = new Set<string>();
  const outcomes = params.outcomes.map((outcome, i) => {
    const at = `outcomes[${i}]`;
    const jobId = assertUuid(outcome?.jobId, `${at}.jobId`);
    if (seen.has(jobId)) throw new InvalidArgumentError(`Job ${jobId} is reported twice in one jobCompleteMany call.`, `${at}.jobId`);
    seen.add(jobId);
    const attempt = assertPositiveInteger(outcome.attempt, `${at}.attempt`);
    const error = (text: unknown, argument: string) => {
      if (typeof text !== 'string') throw new InvalidArgumentError(`${at}.${argument} must be a string.`, `${at}.${argument}`);
      return truncateUtf8(storableText(text), limits.maxErrorBytes);
    };
    switch (outcome.kind) {
      case 'succeeded':
        return {
          jobId,
          attempt,
          kind: outcome.kind,
          output:
            outcome.output === undefined
              ? null
              : encodeJson(outcome.output, { argument: 'output', maxBytes: limits.maxOutputBytes, maxDepth: limits.maxJsonDepth }),
          error: null,
          retryDelayMs: 0,
        };
      case 'failed':
        return {
          jobId,
          attempt,
          kind: outcome.kind,
          output: null,
          error: error(outcome.error, 'error'),
          retryDelayMs: assertDelayMs(outcome.retryDelayMs, `${at}.retryDelayMs`),
        };
      case 'dead_lettered':
        return { jobId, attempt, kind: outcome.kind, output: null, error: error(outcome.error, 'error'), retryDelayMs: 0 };
      case 'snoozed':
        return { jobId, attempt, kind: outcome.kind, output: null, error: null, retryDelayMs: assertDelayMs(outcome.delayMs, `${at}.delayMs`) };
      case 'quarantined':
        return { jobId, attempt, kind: outcome.kind, output: null, error: error(outcome.reason, 'reason'), retryDelayMs: 0 };
      default:
        throw new InvalidArgumentError(
          `${at}.kind must be one of succeeded, failed, dead_lettered, snoozed or quarantined, got ${String((outcome as { kind?: unknown }).kind)}.`,
          `${at}.kind`,
        );
    }
  });
  return { workerId, outcomes };
}

/** Checks a lease sweep's params and returns its `limit`. */
export function checkExpireParams(params: ExpireLeasesParams): number {
  return assertPositiveInteger(paramsOf('jobExpireLeases', params, '{ limit }').limit, 'limit', MAX_BATCH);
}

/** Checks a maintenance lease's params: the task's name, the worker, and the lease length (at most {@link MAX_LEASE_MS}). */
export function checkMaintenanceLeaseParams(params: MaintenanceLeaseParams): { task: string; workerId: string; leaseMs: number } {
  paramsOf('maintenanceLease', params, '{ task, workerId, leaseMs }');
  return {
    task: assertNonEmptyString(params.task, 'task', 64),
    workerId: assertNonEmptyString(params.workerId, 'workerId'),
    leaseMs: assertPositiveInteger(params.leaseMs, 'leaseMs', MAX_LEASE_MS),
  };
}

/** The fields a job listing takes, as its refusals name them. */
const LIST_SHAPE = '{ state?, queue?, name?, idPrefix?, enqueuedAfter?, enqueuedBefore?, order?, limit?, before?, after? }';

/**
 * Checks a job listing's filters and cursor, and fills in the default `limit` ({@link DEFAULT_LIST_LIMIT})
 * and `order` (`newest`). The cursor is `before` for the newest order and `after` for the oldest;
 * the other one is refused, so a page is never read the wrong way.
 */
export function checkListParams(params: ListJobsParams | undefined, method = 'jobList'): DriverListParams {
  const p = optionalParamsOf(method, params, LIST_SHAPE) ?? {};
  if (p.state !== undefined && !isJobState(p.state)) {
    throw new InvalidArgumentError(`state must be a job state, got ${String(p.state)}.`, 'state');
  }
  if (p.queue !== undefined) assertQueueName(p.queue);
  if (p.name !== undefined) assertNonEmptyString(p.name, 'name');
  const order = p.order ?? 'newest';
  if (order !== 'newest' && order !== 'oldest') {
    throw new InvalidArgumentError(`order must be newest or oldest, got ${showValue(p.order)}.`, 'order');
  }
  const [cursorName, wrongName] = order === 'newest' ? (['before', 'after'] as const) : (['after', 'before'] as const);
  if (p[wrongName] !== undefined) {
    throw new InvalidArgumentError(`${wrongName} pages the ${order === 'newest' ? 'oldest' : 'newest'} order; with order ${order}, pass the previous page's next as ${cursorName}.`, wrongName);
  }
  const cursor = p[cursorName];
  const limit = p.limit === undefined ? DEFAULT_LIST_LIMIT : assertPositiveInteger(p.limit, 'limit', MAX_BATCH);
  return {
    ...(p.state === undefined ? {} : { state: p.state }),
    ...(p.queue === undefined ? {} : { queue: p.queue }),
    ...(p.name === undefined ? {} : { name: p.name }),
    ...(p.idPrefix === undefined ? {} : { idPrefix: checkIdPrefix(p.idPrefix) }),
    ...(p.enqueuedAfter === undefined ? {} : { enqueuedAfter: assertInstant(p.enqueuedAfter, 'enqueuedAfter') }),
    ...(p.enqueuedBefore === undefined ? {} : { enqueuedBefore: assertInstant(p.enqueuedBefore, 'enqueuedBefore') }),
    order,
    limit,
    ...(cursor === undefined ? {} : { cursor: assertUuid(cursor, cursorName) }),
  };
}

/** A listing's id prefix in the ids' own spelling, or the one sentence that says why it cannot start an id. */
function checkIdPrefix(value: unknown): string {
  const canonical = typeof value === 'string' ? canonicalIdPrefix(value) : null;
  if (canonical === null) {
    throw new InvalidArgumentError(
      `idPrefix must be the start of a UUID: 1 to 32 hex digits, with hyphens only where a UUID has them, got ${showValue(value)}.`,
      'idPrefix',
    );
  }
  return canonical;
}

/** Checks a schedule listing's params: the page size ({@link DEFAULT_LIST_LIMIT} when absent) and the cursor. */
export function checkScheduleListParams(params: ScheduleListParams | undefined): { limit: number; after: string | null } {
  const p = optionalParamsOf('scheduleList', params, '{ limit?, after? }') ?? {};
  return {
    limit: p.limit === undefined ? DEFAULT_LIST_LIMIT : assertPositiveInteger(p.limit, 'limit', MAX_BATCH),
    after: p.after === undefined ? null : assertUuid(p.after, 'after'),
  };
}

/** Checks a blocked-sequence listing's params: its `limit` ({@link DEFAULT_LIST_LIMIT} when absent) and `after` key. */
export function checkBlockedSequenceParams(params: ListBlockedSequencesParams | undefined): { limit: number; after: string | null } {
  optionalParamsOf('jobListBlockedSequences', params, '{ limit?, after? }');
  const limit = params?.limit === undefined ? DEFAULT_LIST_LIMIT : assertPositiveInteger(params.limit, 'limit', MAX_BATCH);
  const after = params?.after === undefined ? null : assertNonEmptyString(params.after, 'after', MAX_SEQUENCE_KEY);
  return { limit, after };
}

/** The most groups one {@link OperatorStore.jobListGroups} page holds: each costs up to two counts of {@link GROUP_COUNT_CAP} entries. */
export const MAX_GROUP_PAGE = 200;

/** Checks a group listing's params: its `limit` ({@link DEFAULT_LIST_LIMIT} when absent) and `after` group. */
export function checkGroupListParams(params: ListGroupsParams | undefined): { limit: number; after: string | null } {
  optionalParamsOf('jobListGroups', params, '{ limit?, after? }');
  const limit = params?.limit === undefined ? DEFAULT_LIST_LIMIT : assertPositiveInteger(params.limit, 'limit', MAX_GROUP_PAGE);
  const after = params?.after === undefined ? null : assertNonEmptyString(params.after, 'after', MAX_CONCURRENCY_KEY);
  return { limit, after };
}

/** Checks a dead-letter listing's params and returns its `limit`, {@link DEFAULT_LIST_LIMIT} when absent. */
export function checkDeadLetterListParams(params: ListDeadLetteredParams | undefined): number {
  optionalParamsOf('jobListDeadLettered', params, '{ limit? }');
  return params?.limit === undefined ? DEFAULT_LIST_LIMIT : assertPositiveInteger(params.limit, 'limit', MAX_BATCH);
}
