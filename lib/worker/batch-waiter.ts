import {
  assertUuid,
  BatchNotFoundError,
  BatchWaitAbortedError,
  BatchWaitTimeoutError,
  isTerminalState,
  JobFailedError,
  JobNotFoundError,
} from '../core/index.js';
import type { BatchSummary, OperatorStore } from '../store/index.js';
import { checkWaitOptions, type JobWaiter, type WaitForOptions } from './job-waiter.js';
import { realTimers, type Timers } from './timers.js';

/** The first and the longest pause between reads of a batch whose callbacks ended before it did. */
const MIN_POLL_MS = 100;
const MAX_POLL_MS = 2_000;

/**
 * Waits until a batch has ended and every callback of it has ended too (ran to its end, or was
 * cancelled), and resolves with the batch as read then. The callbacks are waited on through the
 * shared waiter, so a thousand waits cost what its poll costs. A callback ends before its batch
 * only when it is cancelled early (onSuccess after a failure, or by an operator); then the batch
 * itself is read again, backing off from 100 ms to 2 s, until it ends.
 */
export async function waitForBatch(
  store: Pick<OperatorStore, 'jobBatch'>,
  waiter: Pick<JobWaiter, 'waitFor'> & { readonly timers?: Timers },
  batchId: string,
  options: WaitForOptions = {},
): Promise<BatchSummary> {
  const timers = waiter.timers ?? realTimers;
  const id = assertUuid(batchId, 'batchId');
  const { timeoutMs, signal } = checkWaitOptions(options, 'waitForBatch');
  if (signal?.aborted) throw new BatchWaitAbortedError(id, signal.reason);
  // One stop for every wait inside: the caller's signal, or the one deadline, on the waiter's timers
  // (under the testing kit, the kit's clock).
  const stop = new AbortController();
  const onAbort = () => stop.abort(new BatchWaitAbortedError(id, signal!.reason));
  signal?.addEventListener('abort', onAbort, { once: true });
  const deadline = timeoutMs === undefined ? undefined : timers.setTimeout(() => stop.abort(new BatchWaitTimeoutError(id, timeoutMs)), timeoutMs);
  try {
    return await untilEnded(store, waiter, id, stop.signal, timers);
  } catch (error) {
    // The wait that the stop aborted reports the stop's own reason.
    throw stop.signal.aborted ? stop.signal.reason : error;
  } finally {
    if (deadline !== undefined) timers.clearTimeout(deadline);
    signal?.removeEventListener('abort', onAbort);
  }
}

async function untilEnded(
  store: Pick<OperatorStore, 'jobBatch'>,
  waiter: Pick<JobWaiter, 'waitFor'>,
  id: string,
  stop: AbortSignal,
  timers: Timers,
): Promise<BatchSummary> {
  const read = async (failedLimit?: number) => {
    const summary = await store.jobBatch({ batchId: id, ...(failedLimit === undefined ? {} : { failedLimit }) });
    if (summary === null) throw new BatchNotFoundError(id);
    return summary;
  };
  const ended = (summary: BatchSummary) => summary.ended && summary.callbacks.every((callback) => isTerminalState(callback.state));
  const first = await read(0);
  for (const callback of first.callbacks) {
    if (isTerminalState(callback.state)) continue;
    await waiter.waitFor(callback.jobId, { signal: stop }).catch((error: unknown) => {
      // A callback that ended any way at all has ended; one that retention or the lean finish removed too.
      if (error instanceof JobFailedError || error instanceof JobNotFoundError) return;
      throw error;
    });
  }
  // Counted without failed ids while it waits; the summary it resolves with is read whole.
  let pause = MIN_POLL_MS;
  while (!ended(await read(0))) {
    await sleep(pause, timers, stop);
    pause = Math.min(pause * 2, MAX_POLL_MS);
  }
  return read();
}

function sleep(ms: number, timers: Timers, stop: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      timers.clearTimeout(timer);
      reject(stop.reason);
    };
    const timer = timers.setTimeout(() => {
      stop.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    if (stop.aborted) onAbort();
    else stop.addEventListener('abort', onAbort, { once: true });
  });
}
