import { retryDelayMs, type RandomSource, type RetryPolicy } from '../core/index.js';
import type { HistoryEntry, JobStore, ObserverLeaseParams } from '../store/index.js';
import { describe } from './attempt-executor.js';
import { describeError, errorText, type ErrorLogDetail } from './log-text.js';
import type { SchedulerLogger } from './scheduler-logger.js';
import { withTimeout, type Timers } from './timers.js';
import type { TransitionEvent, TransitionObserver } from './transition-observer.js';

export interface ObserverDispatcherOptions {
  readonly workerId: string;
  /** Time between passes. */
  readonly pollIntervalMs: number;
  /** How long one node may deliver for an observer before another may take over. */
  readonly leaseMs: number;
  /** Log entries read per batch. */
  readonly batchSize: number;
  /** Backoff after a failed delivery, by failures in a row. */
  readonly retry: RetryPolicy;
  /** How much of an observer's error its log line carries. Default `message`. */
  readonly errorLogDetail?: ErrorLogDetail;
}

export interface ObserverDispatcherDeps {
  readonly store: JobStore;
  readonly observers: readonly TransitionObserver[];
  readonly options: ObserverDispatcherOptions;
  readonly timers: Timers;
  readonly logger: SchedulerLogger;
  readonly random: RandomSource;
}

class DeliveryTimeoutError extends Error {
  constructor(ms: number) {
    super(`delivery did not finish within ${ms} ms`);
    this.name = 'DeliveryTimeoutError';
  }
}

/**
 * Feeds the transition log to observers, at least once each. For every observer it leases the
 * observer's cursor (one node delivers at a time), reads the entries after it in batches, delivers
 * the matching ones in order, and commits the cursor after each batch. A delivery that throws
 * commits what came before it and backs the observer off; the failed event comes again. A node
 * that dies mid-batch never commits, so whoever leases next starts again from the last commit.
 */
export class ObserverDispatcher {
  private timer: unknown;
  private running: Promise<void> | undefined;
  private stopped = false;

  constructor(private readonly deps: ObserverDispatcherDeps) {}

  /**
   * Makes sure every observer has a cursor, so it hears about everything from here on; a new
   * cursor starts at the end of the log. Run before the node claims, or its first outcomes could
   * land before the cursor exists.
   */
  async register(): Promise<void> {
    const { store, options, logger } = this.deps;
    for (const observer of this.deps.observers) {
      try {
        await store.observerLease(leaseParams(observer, options));
      } catch (error) {
        logger.warn(`registering observer ${observer.id} failed (${describe(error)}); its first pass will try again.`);
      }
    }
  }

  start(): void {
    this.stopped = false;
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== undefined) this.deps.timers.clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
  }

  /** One pass over every observer. Resolves with the number of events delivered. */
  async runOnce(): Promise<number> {
    let delivered = 0;
    for (const observer of this.deps.observers) delivered += await this.serve(observer);
    return delivered;
  }

  private schedule(delayMs: number): void {
    this.timer = this.deps.timers.setTimeout(() => {
      this.timer = undefined;
      this.running = this.runOnce()
        .then(() => undefined)
        .finally(() => {
          if (!this.stopped) this.schedule(this.deps.options.pollIntervalMs);
        });
    }, delayMs);
  }

  private async serve(observer: TransitionObserver): Promise<number> {
    const { store, options, logger } = this.deps;
    let delivered = 0;
    try {
      const lease = await store.observerLease(leaseParams(observer, options));
      if (!lease) return 0;
      let position = lease.position;
      let committed = position;
      for (;;) {
        const entries = await store.historyRead({ after: position, limit: options.batchSize });
        for (const entry of entries) {
          if (matches(observer, entry)) {
            try {
              await this.deliver(observer, toEvent(entry));
            } catch (error) {
              if (position !== committed) await store.observerCommit({ observer: observer.id, workerId: options.workerId, position });
              const delay = retryDelayMs(lease.failures + 1, options.retry, this.deps.random);
              await store.observerFail({ observer: observer.id, workerId: options.workerId, error: errorText(error), retryDelayMs: delay });
              logger.warn(`observer ${observer.id} failed on event ${entry.id} (${entry.name} ${entry.jobId} → ${entry.state}): ${describeError(error, options.errorLogDetail)}; retrying in ${delay} ms.`);
              return delivered;
            }
            delivered += 1;
          }
          position = entry.position;
        }
        if (position !== committed) {
          if (!(await store.observerCommit({ observer: observer.id, workerId: options.workerId, position }))) {
            logger.warn(`observer ${observer.id} lost its delivery lease; another node carries on from the last commit.`);
            return delivered;
          }
          committed = position;
        }
        if (entries.length < options.batchSize || this.stopped) return delivered;
      }
    } catch (error) {
      logger.warn(`observer ${observer.id} could not read the transition log (${describe(error)}); the next pass tries again.`);
      return delivered;
    }
  }

  /** Runs one delivery, failing it if it outlives the lease (another node may be delivering by then). */
  private deliver(observer: TransitionObserver, event: TransitionEvent): Promise<void> {
    const { timers, options } = this.deps;
    const work = Promise.resolve().then(() => observer.deliver(event));
    return withTimeout(work, options.leaseMs, timers, () => new DeliveryTimeoutError(options.leaseMs));
  }
}

/**
 * A lease request that records what the observer hears about on its cursor, so that a store under
 * the lean finish keeps the jobs whose entries it would still be fed.
 */
function leaseParams(observer: TransitionObserver, options: ObserverDispatcherOptions): ObserverLeaseParams {
  return { observer: observer.id, workerId: options.workerId, leaseMs: options.leaseMs, to: observer.to, ...(observer.jobs ? { jobs: observer.jobs } : {}) };
}

function matches(observer: TransitionObserver, entry: HistoryEntry): boolean {
  return observer.to.includes(entry.state) && (observer.jobs === undefined || observer.jobs.includes(entry.name));
}

function toEvent(entry: HistoryEntry): TransitionEvent {
  return Object.freeze({
    eventId: String(entry.id),
    jobId: entry.jobId,
    name: entry.name,
    state: entry.state,
    attempt: entry.attempt,
    at: entry.at,
    error: entry.error,
  });
}
