import { assertUuid, BatchNotFoundError, IllegalTransitionError, InvalidArgumentError, showValue, type CancelOutcome } from '../../core/index.js';
import type { BatchCancelParams, BatchCancelResult, BatchParams, BatchSummary, CancelResult, JobCancelParams, ListBatchesParams } from '../job-store.types.js';
import type { StoreDriver } from '../checked/store-driver.js';
import { optionalParamsOf, paramsOf } from '../checked/params-of.js';

/** Failed ids a batch read returns when none is asked for, and the most it may ask for. */
export const DEFAULT_FAILED_LIMIT = 1_000;
export const MAX_FAILED_LIMIT = 10_000;
/** Batches a listing returns when none is asked for, and the most one page may hold. */
export const DEFAULT_BATCH_LIST_LIMIT = 50;
export const MAX_BATCH_LIST_LIMIT = 200;
/** Batches a listing counts at once. */
const LIST_READS_AT_ONCE = 4;
/** Open jobs one round of a batch cancel reads; the cancel reads again until none is left. */
const CANCEL_PAGE = 500;

/** Reads a batch after checking its params. */
export function readBatch(driver: StoreDriver, params: BatchParams): Promise<BatchSummary | null> {
  const p = paramsOf('jobBatch', params, '{ batchId, failedLimit? }');
  const batchId = assertUuid(p.batchId, 'batchId');
  const failedLimit = p.failedLimit === undefined ? DEFAULT_FAILED_LIMIT : wholeNumber(p.failedLimit, 'failedLimit', 0, MAX_FAILED_LIMIT);
  return driver.jobBatch({ batchId, failedLimit });
}

/** A page of batches, newest first, each read with no failed ids. */
export async function listBatches(driver: StoreDriver, params: ListBatchesParams | undefined): Promise<BatchSummary[]> {
  const p = optionalParamsOf('jobListBatches', params, '{ limit?, before? }') ?? {};
  const limit = p.limit === undefined ? DEFAULT_BATCH_LIST_LIMIT : wholeNumber(p.limit, 'limit', 1, MAX_BATCH_LIST_LIMIT);
  const before = p.before === undefined ? null : assertUuid(p.before, 'before');
  const ids = await driver.jobBatchIds({ limit, before });
  const batches: BatchSummary[] = [];
  // A few reads at a time: a page of 200 at once would take a pool's every connection from its workers.
  for (let from = 0; from < ids.length; from += LIST_READS_AT_ONCE) {
    const read = await Promise.all(ids.slice(from, from + LIST_READS_AT_ONCE).map((batchId) => driver.jobBatch({ batchId, failedLimit: 0 })));
    // A batch retention emptied between the two reads is left out.
    for (const batch of read) if (batch !== null) batches.push(batch);
  }
  return batches;
}

/**
 * Cancels every job of the batch that has not ended, callbacks first, through `cancel` (the
 * store's own jobCancel: each decided, written and audited as one cancel). Reads the open jobs a
 * page at a time until none is left; a job that ended in between is counted as nothing. A batch
 * id no stored job has is refused with {@link BatchNotFoundError}, as the dashboard and CLI refuse it.
 */
export async function cancelBatch(
  driver: StoreDriver,
  params: BatchCancelParams,
  cancel: (params: JobCancelParams) => Promise<CancelResult>,
): Promise<BatchCancelResult> {
  const p = paramsOf('jobCancelBatch', params, '{ batchId, actor? }');
  const batchId = assertUuid(p.batchId, 'batchId');
  let cancelled = 0;
  let cancelRequested = 0;
  const asked = new Set<string>();
  for (;;) {
    // A running job asked to stop stays open until its worker sees the request: skip it on later pages.
    const open = (await driver.jobBatchOpen({ batchId, limit: CANCEL_PAGE + asked.size })).filter((id) => !asked.has(id));
    if (open.length === 0) {
      if (asked.size === 0 && (await driver.jobBatch({ batchId, failedLimit: 0 })) === null) throw new BatchNotFoundError(batchId);
      break;
    }
    for (const jobId of open) {
      const outcome = await cancel({ jobId, ...(p.actor === undefined ? {} : { actor: p.actor }), onlyFrom: ['scheduled', 'awaiting_parents', 'running'] }).then((result) => result.outcome, endedMeanwhile);
      if (outcome === 'cancelled') cancelled += 1;
      else if (outcome === 'cancel_requested') cancelRequested += 1;
      asked.add(jobId);
    }
  }
  return { cancelled, cancelRequested };
}

/** A job that ended between the read and its cancel is refused by `onlyFrom`: it counts as nothing. */
function endedMeanwhile(error: unknown): CancelOutcome | null {
  if (error instanceof IllegalTransitionError) return null;
  throw error;
}

function wholeNumber(value: unknown, argument: string, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new InvalidArgumentError(`${argument} must be a whole number from ${min} to ${max}, got ${showValue(value)}.`, argument);
  }
  return value;
}
