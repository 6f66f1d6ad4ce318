import type { Timers, WorkerNodeDeps } from '../worker/index.js';

/**
 * The worker node's clock and timers. Only the testing kit provides them, to run the node on a
 * manual clock and timers it fires itself; without them the node uses the wall clock and Node's
 * timers. Not exported from the package root: an application never sets it.
 */
export const SCHEDULER_NODE_TIMING = Symbol('SCHEDULER_NODE_TIMING');

/** What {@link SCHEDULER_NODE_TIMING} provides. */
export interface SchedulerNodeTiming extends Pick<WorkerNodeDeps, 'clock' | 'timers'> {
  /**
   * The timers of `waitFor`'s waiter, when not `timers`: the kit's keep its timeouts and polls on
   * the manual clock, but read a new wait at once, without waiting for the test to move time.
   */
  readonly waiterTimers?: Timers;
}
