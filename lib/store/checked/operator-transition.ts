import { cancelOutcome, IllegalTransitionError, type JobRecord, type JobState, type Transition } from '../../core/index.js';
import type { CancelResult } from '../job-store.js';
import { toJob, type JobRow } from '../job-row.js';

/** An operator event applied to one job: the row before, the row after, and the lifecycle's verdict. */
export interface OperatorTransition {
  readonly before: JobRow;
  readonly after: JobRow;
  readonly result: Transition;
}

/** The replayed job, or the error that says why this state cannot be replayed. */
export function replayResult({ before, after, result }: OperatorTransition): JobRecord {
  if (!result.ok) {
    throw new IllegalTransitionError(before.id, 'replay', before.state, `Job ${before.id} is ${before.state}; only dead-lettered or quarantined jobs can be replayed.`);
  }
  return toJob(after);
}

/** The job due now, or the error that says why only a waiting job can be run now. */
export function runNowResult({ before, after, result }: OperatorTransition): JobRecord {
  if (!result.ok) {
    throw new IllegalTransitionError(before.id, 'run_now', before.state, `Job ${before.id} is ${before.state}; only a scheduled job can be run now.`);
  }
  return toJob(after);
}

/** What the cancel did, or the error that says why this state cannot be cancelled. */
export function cancelResult({ before, after, result }: OperatorTransition, onlyFrom?: readonly JobState[]): CancelResult {
  // A driver that dropped `onlyFrom` would let the cancel through; throwing here rolls its write back.
  const outside = onlyFrom !== undefined && !onlyFrom.includes(before.state);
  if (!result.ok || outside) {
    const message =
      outside
        ? `Job ${before.id} is ${before.state}, not ${orList(onlyFrom!)}, so it was left as it is.`
        : `Job ${before.id} already ended as ${before.state} and cannot be cancelled.`;
    throw new IllegalTransitionError(before.id, 'cancel', before.state, message);
  }
  return { job: toJob(after), outcome: cancelOutcome(before, after) };
}

/** `a`, `a or b`, `a, b or c`. */
function orList(items: readonly string[]): string {
  return items.length < 2 ? items.join('') : `${items.slice(0, -1).join(', ')} or ${items.at(-1)}`;
}
