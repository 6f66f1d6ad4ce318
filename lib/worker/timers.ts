/** The timer functions the pump uses, injectable so tests can drive time themselves. */
export interface Timers {
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
  /**
   * Runs `callback` once the callbacks and promise reactions already under way have run, without
   * waiting for time to pass (`setImmediate` when absent). The node sends claims and outcome writes
   * this way, so the attempts that settle together are claimed for and reported together.
   */
  defer?(callback: () => void): void;
}

/** Node's own timers. They keep the process alive, as a worker-only process needs. */
export const realTimers: Timers = {
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
  defer: (callback) => void setImmediate(callback),
};

/** `timers.defer`, or `setImmediate` for timers that do not provide it. */
export function deferOn(timers: Timers, callback: () => void): void {
  if (timers.defer) timers.defer(callback);
  else setImmediate(callback);
}

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

/**
 * Resolves true once `work` settles (either way), or false if `ms` pass first. Never rejects:
 * shutdown uses it to wait for what is in flight without ever waiting longer than it promised.
 */
export function settleWithin(work: Promise<unknown> | undefined, ms: number, timers: Timers): Promise<boolean> {
  if (work === undefined) return Promise.resolve(true);
  return new Promise<boolean>((resolve) => {
    const timer = timers.setTimeout(() => resolve(false), Math.max(0, ms));
    const done = () => {
      timers.clearTimeout(timer);
      resolve(true);
    };
    work.then(done, done);
  });
}
