import {
  assertDelayMs,
  assertNonEmptyString,
  assertPositiveInteger,
  assertWireName,
  checkLimitTarget,
  InvalidArgumentError,
  isJobState,
  JOB_STATES,
  showValue,
  storableText,
  truncateUtf8,
  type FinishMode,
  type HistoryPolicy,
  type JobState,
} from '../../core/index.js';
import type {
  ConcurrencyLimit,
  RateLimit,
  HistoryReadParams,
  LimitTarget,
  ObserverCommitParams,
  ObserverFailParams,
  ObserverHolderParams,
  ObserverLeaseParams,
} from '../job-store.types.js';
import { MAX_LEASE_MS, paramsOf } from './store-params.js';

/**
 * The stored key of a limit: `queue:<name>` or `key:<concurrency key>`. The target must name
 * exactly one of the two (see {@link checkLimitTarget}); `otherKeys` are the keys it may carry
 * besides, as a listed limit passed back as a page cursor carries its `max`.
 */
export function limitKey(target: LimitTarget, what = 'A concurrency limit', otherKeys: readonly string[] = []): string {
  const checked = checkLimitTarget(target, what, { otherKeys });
  return 'queue' in checked ? `queue:${checked.queue}` : `key:${checked.key}`;
}

/** The limit a stored key names, the inverse of {@link limitKey}. */
export function limitOf(key: string, max: number): ConcurrencyLimit {
  return key.startsWith('queue:') ? { queue: key.slice('queue:'.length), max } : { key: key.slice('key:'.length), max };
}

/** The rate limit a stored key names, the inverse of {@link limitKey}. */
export function rateLimitOf(key: string, max: number, perMs: number): RateLimit {
  return key.startsWith('queue:') ? { queue: key.slice('queue:'.length), max, perMs } : { key: key.slice('key:'.length), max, perMs };
}

/** Checks a limit's cap: a positive integer, at most 10,000. */
export function assertLimitMax(max: unknown): number {
  return assertPositiveInteger(max, 'max', 10_000);
}

/** Positions of stores that commit one transaction at a time: the entry id. */
export const SERIAL_POSITION = /^(0|[1-9][0-9]{0,15})$/;

/** PostgreSQL positions: the writing transaction's id and the entry id (`tx:id`). */
export const PG_POSITION = /^(0|[1-9][0-9]{0,19}):(0|[1-9][0-9]{0,18})$/;

/** Checks a history position against the adapter's shape. */
export function assertPosition(position: unknown, shape: RegExp, name = 'position'): string {
  if (typeof position !== 'string' || !shape.test(position)) {
    throw new InvalidArgumentError(`${name} must be a history position this store handed out, got ${JSON.stringify(position)}.`, name);
  }
  return position;
}

/** Checks a history read: `after` of this store's position shape (`start` when absent) and a `limit` of at most 10,000. */
export function checkHistoryRead(params: HistoryReadParams, shape: RegExp, start: string): { after: string; limit: number } {
  paramsOf('historyRead', params, '{ after?, limit }');
  const after = params.after === undefined ? start : assertPosition(params.after, shape, 'after');
  return { after, limit: assertPositiveInteger(params.limit, 'limit', 10_000) };
}

/** The cursor and its would-be holder: what every observer operation names. */
function checkObserverHolder(method: string, params: ObserverHolderParams, shape: string) {
  paramsOf(method, params, shape);
  return {
    observer: assertNonEmptyString(params.observer, 'observer', 200),
    workerId: assertNonEmptyString(params.workerId, 'workerId'),
  };
}

/** Wire names an observer's `jobs` filter may list, at most. */
export const MAX_OBSERVER_JOBS = 1_000;

/**
 * Checks an observer lease request: the observer's name, the worker, a lease length of at most
 * {@link MAX_LEASE_MS}, and the filter the cursor records (`to`: distinct job states; `jobs`: up to
 * {@link MAX_OBSERVER_JOBS} wire names of at most `maxNameLength`), null where absent (everything).
 */
export function checkObserverLease(params: ObserverLeaseParams, maxNameLength: number) {
  const holder = checkObserverHolder('observerLease', params, '{ observer, workerId, leaseMs, to?, jobs? }');
  const leaseMs = assertPositiveInteger(params.leaseMs, 'leaseMs', MAX_LEASE_MS);
  return { ...holder, leaseMs, to: observerStates(params.to), jobs: observerJobs(params.jobs, maxNameLength) };
}

/** A list as a refusal names it: its size, since its entries are checked one by one. */
function listShown(value: unknown): string {
  if (!Array.isArray(value)) return showValue(value);
  return value.length === 0 ? 'an empty list' : `a list of ${value.length}`;
}

function observerStates(to: unknown): readonly JobState[] | null {
  if (to === undefined) return null;
  if (!Array.isArray(to) || to.length === 0 || to.length > JOB_STATES.length) {
    throw new InvalidArgumentError(`to must be a list of 1 to ${JOB_STATES.length} job states, got ${listShown(to)}.`, 'to');
  }
  to.forEach((state: unknown, i) => {
    if (!isJobState(state)) throw new InvalidArgumentError(`to[${i}] must be a job state (${JOB_STATES.join(', ')}), got ${showValue(state)}.`, `to[${i}]`);
  });
  return [...new Set(to as JobState[])].sort();
}

function observerJobs(jobs: unknown, maxNameLength: number): readonly string[] | null {
  if (jobs === undefined) return null;
  if (!Array.isArray(jobs) || jobs.length === 0 || jobs.length > MAX_OBSERVER_JOBS) {
    throw new InvalidArgumentError(`jobs must be a list of 1 to ${MAX_OBSERVER_JOBS} wire names, got ${listShown(jobs)}.`, 'jobs');
  }
  return [...new Set(jobs.map((name: unknown, i) => assertWireName(name, maxNameLength, `jobs[${i}]`)))].sort();
}

/** Checks an observer commit: the holder and a position of this store's shape. */
export function checkObserverCommit(params: ObserverCommitParams, shape: RegExp) {
  return { ...checkObserverHolder('observerCommit', params, '{ observer, workerId, position }'), position: assertPosition(params.position, shape) };
}

/** Checks a failed delivery's report, its error cut to `maxErrorBytes`. */
export function checkObserverFail(params: ObserverFailParams, maxErrorBytes: number) {
  return {
    ...checkObserverHolder('observerFail', params, '{ observer, workerId, error, retryDelayMs }'),
    error: truncateUtf8(storableText(String(params.error)), maxErrorBytes),
    retryDelayMs: assertDelayMs(params.retryDelayMs, 'retryDelayMs'),
  };
}

/** Checks a finish mode, defaulting to `keep`. */
export function assertFinishMode(finish: unknown): FinishMode {
  if (finish === undefined || finish === 'keep') return 'keep';
  if (finish === 'lean') return 'lean';
  throw new InvalidArgumentError(`finish must be "keep" or "lean", got ${showValue(finish)}.`, 'finish');
}

/** Checks a history policy, defaulting to `transitions_and_errors`. */
export function assertHistoryPolicy(policy: unknown): HistoryPolicy {
  if (policy === undefined) return 'transitions_and_errors';
  if (policy === 'off' || policy === 'transitions' || policy === 'transitions_and_errors') return policy;
  throw new InvalidArgumentError(`historyPolicy must be "off", "transitions" or "transitions_and_errors", got ${JSON.stringify(policy)}.`, 'historyPolicy');
}
