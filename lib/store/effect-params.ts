import { assertNonEmptyString, assertPositiveInteger, assertQueueName, InvalidArgumentError, type HistoryPolicy } from '../core/index.js';
import type { ConcurrencyLimit, LimitTarget } from './job-store.js';

/** The stored key of a limit: `queue:<name>` or `key:<concurrency key>`. */
export function limitKey(target: LimitTarget): string {
  if (target && typeof target === 'object' && 'queue' in target && target.queue !== undefined) return `queue:${assertQueueName(target.queue)}`;
  if (target && typeof target === 'object' && 'key' in target && target.key !== undefined) return `key:${assertNonEmptyString(target.key, 'key', 200)}`;
  throw new InvalidArgumentError('A concurrency limit needs a target: { queue } or { key }.', 'target');
}

export function limitOf(key: string, max: number): ConcurrencyLimit {
  return key.startsWith('queue:') ? { queue: key.slice('queue:'.length), max } : { key: key.slice('key:'.length), max };
}

export function assertLimitMax(max: unknown): number {
  return assertPositiveInteger(max, 'max', 10_000);
}

export function checkHistoryRead(params: { afterId: number; limit: number }): { afterId: number; limit: number } {
  const afterId = params?.afterId;
  if (typeof afterId !== 'number' || !Number.isSafeInteger(afterId) || afterId < 0) {
    throw new InvalidArgumentError(`afterId must be a whole number at or above 0, got ${String(afterId)}.`, 'afterId');
  }
  return { afterId, limit: assertPositiveInteger(params.limit, 'limit', 10_000) };
}

export function checkObserverLease(params: { observer: string; workerId: string; leaseMs: number }) {
  return {
    observer: assertNonEmptyString(params?.observer, 'observer', 200),
    workerId: assertNonEmptyString(params.workerId, 'workerId'),
    leaseMs: assertPositiveInteger(params.leaseMs, 'leaseMs', 86_400_000),
  };
}

/** Checks a history policy, defaulting to `transitions_and_errors`. */
export function assertHistoryPolicy(policy: unknown): HistoryPolicy {
  if (policy === undefined) return 'transitions_and_errors';
  if (policy === 'off' || policy === 'transitions' || policy === 'transitions_and_errors') return policy;
  throw new InvalidArgumentError(`historyPolicy must be "off", "transitions" or "transitions_and_errors", got ${JSON.stringify(policy)}.`, 'historyPolicy');
}
