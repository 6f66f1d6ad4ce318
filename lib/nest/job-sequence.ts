import { InvalidArgumentError, showValue } from '../core/index.js';
import { describeError, isInstance } from '../worker/index.js';
import type { EnqueueInput, SequenceAfterFailure } from '../store/index.js';

/**
 * A handler's or definition's sequence: each job's key computed from its payload at enqueue (an
 * account, an order), and what a job does after a predecessor that failed for good. An enqueue's
 * own `sequence` wins over it. See docs/sequences.md.
 */
export interface JobSequenceOption<TPayload = unknown> {
  readonly key: (payload: TPayload) => string;
  /** Default `block`. */
  readonly afterFailure?: SequenceAfterFailure;
}

/** Checks a declared sequence option; `argument` names it in the refusal. Returns a frozen copy. */
export function checkJobSequence(value: unknown, argument = 'sequence'): JobSequenceOption | undefined {
  if (value === undefined) return undefined;
  const given = value as { key?: unknown; afterFailure?: unknown } | null;
  if (given === null || typeof given !== 'object' || Array.isArray(given) || typeof given.key !== 'function') {
    throw new InvalidArgumentError(`${argument} must be { key: (payload) => string, afterFailure? }, got ${showValue(value)}.`, argument);
  }
  const unknown = Object.keys(given).filter((key) => key !== 'key' && key !== 'afterFailure');
  if (unknown.length > 0) throw new InvalidArgumentError(`${argument} sets ${showValue(unknown[0])}; it takes key and afterFailure.`, argument);
  if (given.afterFailure !== undefined && given.afterFailure !== 'block' && given.afterFailure !== 'continue') {
    throw new InvalidArgumentError(`${argument}.afterFailure must be "block" or "continue", got ${showValue(given.afterFailure)}.`, `${argument}.afterFailure`);
  }
  const key = given.key as (payload: unknown) => string;
  return Object.freeze(given.afterFailure === undefined ? { key } : { key, afterFailure: given.afterFailure as SequenceAfterFailure });
}

/** The enqueue's `sequence` from a declared one, for this payload; the job's wire name names it in a refusal. */
export function declaredSequence(name: string, declared: JobSequenceOption | undefined, payload: unknown): Pick<EnqueueInput, 'sequence'> {
  if (!declared) return {};
  let key: unknown;
  try {
    key = declared.key(payload);
  } catch (error) {
    // Not the function's message: it may quote the payload, and this error may well be logged.
    throw new InvalidArgumentError(
      `The sequence key function of the job '${name}' threw for this payload (${isInstance(error, Error) ? describeError(error, 'class') : typeof error}); nothing was written.`,
      'sequence',
    );
  }
  if (typeof key !== 'string') throw new InvalidArgumentError(`The sequence key function of the job '${name}' must return a string, got ${showValue(key)}.`, 'sequence');
  return { sequence: declared.afterFailure === undefined ? { key } : { key, afterFailure: declared.afterFailure } };
}
