import type { NodeTimers } from './virtual-scheduler.js';

/**
 * A simulated handler's work: waits on the node's timers, so a paused node's handlers stop with it
 * and a crashed node's never finish; rejects with the signal's reason when it aborts (unless the
 * handler ignores its signal, when `signal` is undefined).
 */
export function handlerSleep(timers: NodeTimers, ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new Error('aborted before the handler started'));
    const handle = timers.setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      timers.clearTimeout(handle);
      reject(signal.reason instanceof Error ? signal.reason : new Error(String(signal.reason)));
    }, { once: true });
  });
}
