import type { EntityManager } from 'typeorm';
import type { FinishMode, HistoryPolicy, SchedulerLimits } from '../../core/index.js';
import type { JobStore } from '../../store/index.js';

/** One freshly opened, empty store and the levers a test needs around it. */
export interface StoreUnderTest {
  readonly store: JobStore;
  /**
   * Moves the store's clock forward by `ms`. SQL targets shift every stored instant back instead,
   * which is the same thing for every comparison the store makes against its own `now()`.
   */
  advance(ms: number): Promise<void>;
  /** Every row of every table the store owns, for "nothing changed" checks. */
  snapshot(): Promise<unknown>;
  /** Runs `work` in a host TypeORM transaction on the store's DataSource (stores with transactionalEnqueue). */
  hostTransaction?<T>(work: (manager: EntityManager) => Promise<T>): Promise<T>;
  /** Number of job rows, read outside the store. */
  countJobs(): Promise<number>;
}

export interface OpenOptions {
  readonly limits?: Partial<SchedulerLimits>;
  readonly historyPolicy?: HistoryPolicy;
  /** The store's `finish` option; the lean-finish cases open stores with `lean`. */
  readonly finish?: FinishMode;
}

/** An adapter under test. Each `open` returns an isolated, empty store. */
export interface ConformanceTarget {
  readonly name: string;
  open(options?: OpenOptions): Promise<StoreUnderTest>;
  /**
   * Optional: closes and discards the stores opened since the last call. The suite calls it after
   * each case, so the work of discarding hundreds of stores is spread over the cases rather than
   * left to {@link ConformanceTarget.teardown}, whose hook would otherwise grow with the suite.
   */
  cleanup?(): Promise<void>;
  teardown(): Promise<void>;
}

export interface SuiteContext {
  open(options?: OpenOptions): Promise<StoreUnderTest>;
  readonly name: () => string;
}
