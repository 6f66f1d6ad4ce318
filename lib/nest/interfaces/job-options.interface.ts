import type { RetryPolicy } from '../../core/index.js';
import type { JobName } from './job-registry.interface.js';

/** Options of a `@Job` handler. */
export interface JobOptions<N extends string = JobName> {
  /** The wire name: stable across deployments, never derived from the class name. */
  readonly name: N;
  /** The queue its jobs go to. Default `default`; it must be one of the module's `queues`. */
  readonly queue?: string;
  /** Attempts before dead-lettering. Default: the module's `maxAttempts` (10). */
  readonly maxAttempts?: number;
  /** Overrides the module's retry policy for this job. */
  readonly retry?: Partial<RetryPolicy>;
  /** Fail the attempt (and abort its signal) after this many milliseconds. */
  readonly timeoutMs?: number;
  /**
   * Give each attempt a transaction-bound EntityManager whose writes commit with the success
   * outcome. Default true; the transaction only opens if the handler uses the manager.
   */
  readonly transaction?: boolean;
}
