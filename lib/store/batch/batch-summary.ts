import { isDeadLetterState, type BatchCallbackKind, type JobState } from '../../core/index.js';
import type { BatchCallbackJob, BatchSummary } from '../job-store.types.js';

/** Callbacks in the order a summary lists them. */
export const CALLBACK_ORDER: readonly BatchCallbackKind[] = ['success', 'complete', 'failure'];

/** The states in which a job of a batch has not ended. */
export const OPEN_STATES: readonly JobState[] = ['scheduled', 'awaiting_parents', 'running'];

/** A batch's jobs counted per state, as a store's aggregate reads them. */
export interface BatchCounts {
  readonly counts: ReadonlyMap<JobState, number>;
  readonly failedJobIds: string[];
  readonly callbacks: BatchCallbackJob[];
  readonly createdAt: Date;
}

/** The summary every store returns, from its counts: the one place that says what `pending` and `failed` hold. */
export function batchSummary(id: string, { counts, failedJobIds, callbacks, createdAt }: BatchCounts): BatchSummary {
  let total = 0;
  let pending = 0;
  let failed = 0;
  for (const [state, n] of counts) {
    total += n;
    if (OPEN_STATES.includes(state)) pending += n;
    else if (isDeadLetterState(state)) failed += n;
  }
  const order = (job: BatchCallbackJob) => CALLBACK_ORDER.indexOf(job.kind);
  return {
    id,
    total,
    pending,
    succeeded: counts.get('succeeded') ?? 0,
    failed,
    cancelled: counts.get('cancelled') ?? 0,
    ended: pending === 0,
    failedJobIds,
    callbacks: [...callbacks].sort((a, b) => order(a) - order(b)),
    createdAt,
  };
}
