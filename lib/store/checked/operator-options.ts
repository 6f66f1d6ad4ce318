import { assertNonEmptyString, InvalidArgumentError, isJobState, JOB_STATES, type JobState } from '../../core/index.js';
import type { OperatorOptions } from '../job-store.js';

/** The actor recorded in the audit log: the caller's, or `api`. */
export function actorOf(options: OperatorOptions | undefined): string {
  return options?.actor === undefined ? 'api' : assertNonEmptyString(options.actor, 'actor', 200);
}

/** A cancel's `onlyFrom`: absent, or a non-empty list of job states; anything else is refused in one sentence. */
export function checkOnlyFrom(value: unknown): readonly JobState[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || value.length === 0 || !value.every(isJobState)) {
    throw new InvalidArgumentError(`onlyFrom must be a non-empty list of job states (${JOB_STATES.join(', ')}).`, 'onlyFrom');
  }
  return [...value];
}
