import { InvalidArgumentError } from '../core/index.js';
import type { JobStore, Outcome, OutcomeResult } from '../store/index.js';
import { MAX_BATCH } from '../store/index.js';
import { describeError, type ErrorLogDetail } from './log-text.js';
import type { SchedulerLogger } from './scheduler-logger.js';
import { deferOn, type Timers } from './timers.js';

export interface CompleterDeps {
  readonly store: JobStore;
  readonly workerId: string;
  readonly logger: SchedulerLogger;
  readonly timers: Timers;
  /** False once the node forfeited the lease: the outcome is dropped instead of sent. */
  readonly stillHeld: (jobId: string, attempt: number) => boolean;
  /** Called once per submitted outcome, when it was written, found stale, or dropped. */
  readonly onSettled: (outcome: Outcome, result: OutcomeResult | 'dropped') => void;
  /**
   * How much of a failed write's error its log line carries (default `message`). The write holds
   * outputs and error texts, which a refusal or a driver's error may quote.
   */
  readonly errorLogDetail?: ErrorLogDetail;
}

/**
 * Writes outcomes through the fenced write, batching the outcomes that arrive together and whatever
 * accumulates while a write is in flight, so a busy node sends one statement for many outcomes and
 * an idle one waits for no timer. A stale result is logged and counted, never thrown at the user.
 * A failed write is retried with backoff for as long as the node still holds the lease and the
 * completer is open. Once closed it writes nothing more: an outcome not yet written is dropped, and
 * its lease lapses, so the job runs again (the designed fallback for a node that stops).
 */
export class Completer {
  private readonly pending: Outcome[] = [];
  private flushing = false;
  private flushScheduled = false;
  private retryTimer: unknown;
  private failures = 0;
  private idleWaiters: Array<() => void> = [];
  private closed = false;
  /** Outcomes handed to a caller's write by {@link take}, not yet settled or given back. */
  private lent = 0;

  constructor(private readonly deps: CompleterDeps) {}

  submit(outcome: Outcome): void {
    if (this.closed) {
      this.deps.onSettled(outcome, 'dropped');
      return;
    }
    this.pending.push(outcome);
    if (this.retryTimer !== undefined || this.flushing || this.flushScheduled) return;
    // Deferred, so the outcomes of attempts that settle together go in one write, not one and the rest.
    this.flushScheduled = true;
    deferOn(this.deps.timers, () => {
      this.flushScheduled = false;
      void this.flush();
    });
  }

  /** Resolves once nothing is pending or in flight. */
  idle(): Promise<void> {
    if (this.isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /**
   * Hands outcomes waiting for a write to a caller that sends them in a write of its own (the
   * node's claim, which carries them when the store writes outcomes and claims in one statement).
   * With `all`, every waiting outcome; otherwise only those waiting behind this completer's write in
   * flight, so they leave with whichever statement goes first, and none while no write of its own
   * is in flight: those go out at once in their own write, beside the claim, on another connection
   * (docs/worker.md says when the node asks for all). None while a failed write waits to be
   * retried: those go in the retry, in order. The caller reports back through {@link settle} or
   * {@link giveBack}.
   */
  take(all = false): Outcome[] {
    if (this.closed || this.retryTimer !== undefined || (!all && !this.flushing)) return [];
    const batch = this.held(this.pending.splice(0, MAX_BATCH));
    this.lent += batch.length;
    return batch;
  }

  /** What the caller's write did with outcomes it took. */
  settle(batch: readonly Outcome[], results: readonly OutcomeResult[]): void {
    this.lent -= batch.length;
    this.failures = 0;
    this.applied(batch, results);
    this.notifyIdle();
  }

  /** The caller's write of outcomes it took failed: they are written as any failed write is. */
  giveBack(batch: readonly Outcome[], error: unknown): void {
    this.lent -= batch.length;
    if (this.failed([...batch], error) && this.retryTimer === undefined && !this.flushing) this.scheduleRetry();
    this.notifyIdle();
  }

  private isIdle(): boolean {
    return !this.flushing && this.pending.length === 0 && this.lent === 0;
  }

  private notifyIdle(): void {
    if (this.isIdle() && this.retryTimer === undefined) for (const waiter of this.idleWaiters.splice(0)) waiter();
  }

  /** The outcomes of `batch` whose lease the node still holds; the others are settled as dropped. */
  private held(batch: Outcome[]): Outcome[] {
    return batch.filter((outcome) => {
      if (this.deps.stillHeld(outcome.jobId, outcome.attempt)) return true;
      this.deps.onSettled(outcome, 'dropped');
      return false;
    });
  }

  private applied(batch: readonly Outcome[], results: readonly OutcomeResult[]): void {
    batch.forEach((outcome, i) => {
      const result = results[i]!;
      if (result.status === 'stale') {
        this.deps.logger.warn(`stale outcome for ${outcome.jobId} attempt ${outcome.attempt}: this worker no longer held the lease, so nothing was recorded.`, { jobId: outcome.jobId, attempt: outcome.attempt });
      }
      this.deps.onSettled(outcome, result);
    });
  }

  /**
   * A write of `batch` failed. A refused report is dropped (retrying cannot fix it; its lease
   * lapses and the job runs again), as is everything once closed; otherwise the batch goes back to
   * the front of the queue and true is returned: a retry is due, with backoff.
   */
  private failed(batch: Outcome[], error: unknown): boolean {
    if (error instanceof InvalidArgumentError) {
      this.deps.logger.error(`an outcome batch was refused (${describeError(error, this.deps.errorLogDetail)}); dropping ${batch.length} outcome(s).`);
      for (const outcome of batch) this.deps.onSettled(outcome, 'dropped');
      return false;
    }
    if (this.closed) {
      // Closed while this write was in flight: no retry; the leases lapse instead.
      for (const outcome of batch) this.deps.onSettled(outcome, 'dropped');
      return false;
    }
    this.pending.unshift(...batch);
    this.failures += 1;
    this.deps.logger.warn(`recording ${batch.length} outcome(s) failed (${describeError(error, this.deps.errorLogDetail)}); retrying in ${this.retryDelay()} ms.`);
    return true;
  }

  private retryDelay(): number {
    return Math.min(5_000, 50 * 2 ** Math.min(this.failures, 7));
  }

  private scheduleRetry(): void {
    this.retryTimer = this.deps.timers.setTimeout(() => {
      this.retryTimer = undefined;
      void this.flush();
    }, this.retryDelay());
  }

  private async flush(): Promise<void> {
    // A write that waits for its retry goes first, with its backoff (it may have been given back by a claim).
    if (this.flushing || this.closed || this.retryTimer !== undefined) return;
    this.flushing = true;
    try {
      while (this.pending.length > 0 && !this.closed) {
        const batch = this.held(this.pending.splice(0, MAX_BATCH));
        if (batch.length === 0) continue;
        let results: OutcomeResult[];
        try {
          results = await this.deps.store.jobCompleteMany({ workerId: this.deps.workerId, outcomes: batch });
        } catch (error) {
          if (this.failed(batch, error)) {
            this.scheduleRetry();
            return;
          }
          if (this.closed) return;
          continue;
        }
        this.failures = 0;
        this.applied(batch, results);
      }
    } finally {
      this.flushing = false;
      this.notifyIdle();
    }
  }

  /**
   * Stops retrying and writing: outcomes still pending, and any submitted later, are dropped (their
   * leases will lapse). A write already in flight finishes, but is not retried if it fails.
   */
  close(): void {
    this.closed = true;
    if (this.retryTimer !== undefined) this.deps.timers.clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    for (const outcome of this.pending.splice(0)) this.deps.onSettled(outcome, 'dropped');
    for (const waiter of this.idleWaiters.splice(0)) waiter();
  }
}
