/** The timer functions the pump uses, injectable so tests can drive time themselves. */
export interface Timers {
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** Node's own timers. They keep the process alive, as a worker-only process needs. */
export const realTimers: Timers = {
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/**
 * Settles like `work`, unless `ms` passes first: then it rejects with what `onTimeout` returns
 * (which may also abort the work). The timer is cleared either way.
 */
export function withTimeout<T>(work: Promise<T>, ms: number, timers: Timers, onTimeout: () => Error): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = timers.setTimeout(() => reject(onTimeout()), ms);
    work.then(
      (value) => {
        timers.clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        timers.clearTimeout(timer);
        reject(error);
      },
    );
  });
}
