import { InvalidArgumentError } from '../errors/index.js';
import { assertNonEmptyString, assertQueueName } from './job-fields.js';
import { assertOptionsObject, checkOptions } from './known-options.js';

/** Longest concurrency key: a key is a label, and it is stored with every job that carries it. */
export const MAX_CONCURRENCY_KEY = 200;

/** What a concurrency or rate limit applies to: one queue, or one concurrency key. */
export type CheckedLimitTarget = { readonly queue: string } | { readonly key: string };

/** How {@link checkLimitTarget} reads a target. */
export interface LimitTargetReading {
  /**
   * Keys the object may carry besides `queue` and `key` (a module option's rate, or a listed
   * limit passed back as a page cursor), or `any` when the caller checks the other keys itself.
   * Any other key is refused. Default: none.
   */
  readonly otherKeys?: readonly string[] | 'any';
  /** A prefix for the fields a refusal names, such as `rateLimits[2].`. Default: none. */
  readonly where?: string;
}

/**
 * Checks the target of a limit, the one rule every entry point shares (the store, and so the
 * client; the `rateLimits` module option): exactly one of `queue` or `key`. A target naming both
 * used to apply to the queue in silence; naming neither has no meaning. `subject` starts the
 * sentence (`A rate limit`, `rateLimits[2]`).
 */
export function checkLimitTarget(target: unknown, subject: string, reading: LimitTargetReading = {}): CheckedLimitTarget {
  const { otherKeys = [], where = '' } = reading;
  if (target === null || target === undefined) throw new InvalidArgumentError(`${subject} needs a target: { queue } or { key }.`, 'target');
  assertOptionsObject(target, 'target');
  if (otherKeys !== 'any') checkOptions(target, ['queue', 'key', ...otherKeys], { what: 'limit target', argument: 'target', where });
  const { queue, key } = target as { queue?: unknown; key?: unknown };
  if (queue !== undefined && key !== undefined) {
    throw new InvalidArgumentError(`${subject} names both a queue and a key; give one target: { queue } or { key }.`, `${where}target`);
  }
  if (queue !== undefined) return { queue: assertQueueName(queue, `${where}queue`) };
  if (key !== undefined) return { key: assertNonEmptyString(key, `${where}key`, MAX_CONCURRENCY_KEY) };
  throw new InvalidArgumentError(`${subject} needs a target: { queue } or { key }.`, `${where}target`);
}
