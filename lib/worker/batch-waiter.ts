import {
  assertUuid,
  BatchNotFoundError,
  BatchWaitAbortedError,
  BatchWaitTimeoutError,
  isTerminalState,
  JobFailedError,
  JobNotFoundError,
  JobWaitAbortedError,
  JobWaitTimeoutError,
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
  const started = Date.now();
  const left = () => (timeoutMs === undefined ? undefined : timeoutMs - (Date.now() - started));
  const read = async () => {
    const summary = await store.jobBatch({ batchId: id });
    if (summary === null) throw new BatchNotFoundError(id);
    return summary;
  };
  let summary = await read();
  for (const callback of summary.callbacks) {
    if (isTerminalState(callback.state)) continue;
    const remaining = left();
    if (remaining !== undefined && remaining < 1) throw new BatchWaitTimeoutError(id, timeoutMs!);
    await waiter.waitFor(callback.jobId, { ...(remaining === undefined ? {} : { timeoutMs: remaining }), ...(signal ? { signal } : {}) }).catch((error: unknown) => {
      // A callback that ended any way at all has ended; one that retention or the lean finish removed too.
      if (error instanceof JobFailedError || error instanceof JobNotFoundError) return;
      if (error instanceof JobWaitTimeoutError) throw new BatchWaitTimeoutError(id, timeoutMs!);
      if (error instanceof JobWaitAbortedError) throw new BatchWaitAbortedError(id, signal?.reason);
      throw error;
    });
  }
  let pause = MIN_POLL_MS;
  for (;;) {
    summary = await read();
    if (summary.ended && summary.callbacks.every((callback) => isTerminalState(callback.state))) return summary;
    const remaining = left();
    if (remaining !== undefined && remaining < 1) throw new BatchWaitTimeoutError(id, timeoutMs!);
    await sleep(Math.min(pause, remaining ?? pause), timers, signal, id);
    pause = Math.min(pause * 2, MAX_POLL_MS);
  }
}

function sleep(ms: number, timers: Timers, signal: AbortSignal | undefined, batchId: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      timers.clearTimeout(timer);
      reject(new BatchWaitAbortedError(batchId, signal!.reason));
    };
    const timer = timers.setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
