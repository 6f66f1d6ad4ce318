import {
  assertUuid,
  CapabilityNotSupportedError,
  checkOptions,
  InvalidArgumentError,
  isTerminalState,
  JobFailedError,
  JobNotFoundError,
  JobWaitAbortedError,
  JobWaiterClosedError,
  JobWaitTimeoutError,
  showValue,
  type FailedJobState,
  type FinishMode,
} from '../core/index.js';
import { JOB_STATUS_BATCH, type JobStatus, type OperatorStore } from '../store/index.js';
import type { FinishHints } from './finish-hints.js';
import { deferOn, realTimers, type Timers } from './timers.js';

/** What `waitFor` resolves with: the job succeeded. */
export interface JobWaitResult {
  readonly jobId: string;
  readonly state: 'succeeded';
  /** What the handler stored with `setOutput`; null when it stored nothing. */
  readonly output: unknown;
  /**
   * The attempt that succeeded. For a job that a store under the `lean` finish deleted with its
   * success, the least it can have been: the attempt a read last saw running, or the one after
   * the last it saw waiting (docs/awaiting-results.md#the-lean-finish).
   */
  readonly attempt: number;
  /** When it succeeded; null for a job a store under the `lean` finish deleted with its success. */
  readonly finishedAt: Date | null;
}

/** Options of one `waitFor`. */
export interface WaitForOptions {
  /** Give up (with a {@link JobWaitTimeoutError}) after this many milliseconds. Default: no limit. */
  readonly timeoutMs?: number;
  /** Give up (with a {@link JobWaitAbortedError}) when this aborts; an aborted signal rejects at once. */
  readonly signal?: AbortSignal;
}

export interface JobWaiterOptions {
  readonly store: WaiterStore;
  readonly timers?: Timers;
  readonly hints?: FinishHints;
  /** The first poll interval after a wait begins or a hint arrives. Default 100 ms. */
  readonly minPollMs?: number;
  /** The interval doubles after each poll up to this. Default 2,000 ms. */
  readonly maxPollMs?: number;
}

/**
 * What the waiter reads: job statuses, whether the caller holds the store's only connection, and
 * the store's finish mode (a store that leaves it out keeps its jobs).
 */
export type WaiterStore = Pick<OperatorStore, 'jobStatusMany' | 'callerHoldsConnection'> & { readonly finish?: FinishMode };

/** The longest `timeoutMs` a timer can hold (about 24.8 days). */
const MAX_TIMEOUT_MS = 2_147_483_647;

interface Waiter {
  readonly resolve: (result: JobWaitResult) => void;
  readonly reject: (error: Error) => void;
  readonly release: () => void;
}

/**
 * Waits for jobs to finish, for any number of callers, with one shared poll. Every waited-on id is
 * read in one `jobStatusMany` per {@link JOB_STATUS_BATCH} ids, whatever the number of waiters, on
 * the store's own connections: 10,000 waiters cost ten reads per poll and no connection. The
 * interval starts at `minPollMs` when a wait begins or a hint arrives and doubles up to
 * `maxPollMs`; polling stops when nobody waits.
 *
 * A wait is registered before its first read, so a job that finishes at any moment after the call
 * is seen by a read that starts after it: a completion can land between a read and a hint, never
 * between the read and the registration.
 *
 * A store under the `lean` finish deletes a job that succeeds without output and that nothing else
 * needs. So on such a store a job that a read saw unfinished and a later read cannot find has
 * succeeded, without output: the wait resolves. One no read saw before it went is not found, as on
 * any store: a wait that begins after the job finished cannot tell it from an unknown id.
 */
export class JobWaiter {
  private readonly store: WaiterStore;
  /** The timers its polls and timeouts run on; `waitForBatch` pauses on them too. */
  readonly timers: Timers;
  private readonly minPollMs: number;
  private readonly maxPollMs: number;
  private readonly waiting = new Map<string, Set<Waiter>>();
  /** Under the lean finish, each waited-on job's last unfinished status a read saw: if it then vanishes, it succeeded. */
  private readonly unfinished = new Map<string, JobStatus>();
  private intervalMs: number;
  private timer: unknown;
  private soon = false;
  private current: Promise<void> | undefined;
  private readsStarted = 0;
  private again = false;
  private closed = false;
  private unsubscribe: (() => void) | undefined;
  /** A read for an anonymous hint ran less than `minPollMs` ago; `hintedWhileCooling` asks for one more after. */
  private cooling: unknown;
  private hintedWhileCooling = false;

  constructor(private readonly options: JobWaiterOptions) {
    checkOptions(options ?? null, ['store', 'timers', 'hints', 'minPollMs', 'maxPollMs'], { what: 'JobWaiter' });
    this.store = options.store;
    this.timers = options.timers ?? realTimers;
    this.minPollMs = options.minPollMs ?? 100;
    this.maxPollMs = Math.max(this.minPollMs, options.maxPollMs ?? 2_000);
    this.intervalMs = this.minPollMs;
  }

  /** How many `waitFor` calls are pending. */
  get pending(): number {
    let count = 0;
    for (const set of this.waiting.values()) count += set.size;
    return count;
  }

  /**
   * Resolves once the job succeeded; rejects with {@link JobFailedError} once it ended
   * dead-lettered, cancelled or quarantined, {@link JobNotFoundError} when no job has the id,
   * {@link JobWaitTimeoutError} after `timeoutMs`, {@link JobWaitAbortedError} when `signal`
   * aborts, and {@link JobWaiterClosedError} when the waiter closes first.
   */
  waitFor(jobId: string, options: WaitForOptions = {}): Promise<JobWaitResult> {
    let id: string;
    let timeoutMs: number | undefined;
    let signal: AbortSignal | undefined;
    try {
      id = assertUuid(jobId, 'jobId');
      ({ timeoutMs, signal } = checkWaitOptions(options));
    } catch (error) {
      return Promise.reject(error);
    }
    if (this.closed) return Promise.reject(new JobWaiterClosedError(id));
    if (signal?.aborted) return Promise.reject(new JobWaitAbortedError(id, signal.reason));
    if (this.store.callerHoldsConnection?.()) return this.readHere(id);
    return new Promise<JobWaitResult>((resolve, reject) => {
      let timer: unknown;
      const onAbort = () => settle.reject(new JobWaitAbortedError(id, signal!.reason));
      const settle: Waiter = {
        resolve: (result) => {
          settle.release();
          resolve(result);
        },
        reject: (error) => {
          settle.release();
          reject(error);
        },
        release: () => {
          if (timer !== undefined) this.timers.clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
          this.forget(id, settle);
        },
      };
      // Registered first, read second: see the class comment.
      this.register(id, settle);
      if (timeoutMs !== undefined) timer = this.timers.setTimeout(() => settle.reject(new JobWaitTimeoutError(id, timeoutMs!)), timeoutMs);
      signal?.addEventListener('abort', onAbort, { once: true });
      this.pollSoon();
    });
  }

  /**
   * A wait begun by code that holds the store's only connection in an open transaction (SQLite):
   * no job can change state until that transaction ends, and it cannot end while its code awaits
   * this wait, so a poll would wait forever and hold up every other enqueue meanwhile. One read in
   * that transaction answers at once; it does not show the jobs the transaction inserted, which,
   * as on PostgreSQL, exist for nobody else before it commits.
   */
  private async readHere(id: string): Promise<JobWaitResult> {
    const [status] = await this.store.jobStatusMany({ jobIds: [id] });
    const outcome = outcomeOf(id, status);
    if (outcome === null) {
      throw new CapabilityNotSupportedError(
        'concurrentTransactions',
        `Job ${id} has not finished, and no job can while this code holds the store's only connection inside an open transaction; wait for it after that transaction ends.`,
      );
    }
    if (outcome instanceof Error) throw outcome;
    return outcome;
  }

  /** A hint that `jobId` may have finished: poll soon if someone waits for it. */
  poke(jobId: string): void {
    if (this.waiting.has(jobId)) this.pollSoon();
  }

  /**
   * A hint that some jobs finished, which ones unknown (a store's NOTIFY): read now, unless such a
   * hint made a read less than `minPollMs` ago; then read once that interval is over. A busy
   * cluster finishes jobs all the time, and its hints cost at most one read per interval.
   */
  pokeAny(): void {
    if (this.closed || this.waiting.size === 0) return;
    if (this.cooling !== undefined) {
      this.hintedWhileCooling = true;
      return;
    }
    // The poll's backoff goes on: hints that name no job must not hold it at minPollMs.
    this.pollSoon(false);
    this.cooling = this.timers.setTimeout(() => {
      this.cooling = undefined;
      if (!this.hintedWhileCooling) return;
      this.hintedWhileCooling = false;
      this.pokeAny();
    }, this.minPollMs);
  }

  /** Rejects every pending wait with {@link JobWaiterClosedError} and stops polling; later waits reject at once. */
  close(): void {
    this.closed = true;
    for (const [id, set] of [...this.waiting]) for (const waiter of [...set]) waiter.reject(new JobWaiterClosedError(id));
    this.stopPolling();
  }

  private register(id: string, waiter: Waiter): void {
    const set = this.waiting.get(id);
    if (set) set.add(waiter);
    else this.waiting.set(id, new Set([waiter]));
    if (!this.unsubscribe && this.options.hints) this.unsubscribe = this.options.hints.subscribe((jobId) => (jobId === null ? this.pokeAny() : this.poke(jobId)));
  }

  private forget(id: string, waiter: Waiter): void {
    const set = this.waiting.get(id);
    if (!set?.delete(waiter) || set.size > 0) return;
    this.waiting.delete(id);
    this.unfinished.delete(id);
    if (this.waiting.size === 0) this.stopPolling();
  }

  private stopPolling(): void {
    if (this.timer !== undefined) this.timers.clearTimeout(this.timer);
    this.timer = undefined;
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    if (this.cooling !== undefined) this.timers.clearTimeout(this.cooling);
    this.cooling = undefined;
    this.hintedWhileCooling = false;
  }

  /** A poll once the calls under way have run, so waits begun together share one read. */
  private pollSoon(restartBackoff = true): void {
    if (restartBackoff) this.intervalMs = this.minPollMs;
    if (this.current) {
      this.again = true;
      return;
    }
    if (this.soon) return;
    this.soon = true;
    const started = this.readsStarted;
    deferOn(this.timers, () => {
      this.soon = false;
      // A read begun since this request already covers it.
      if (this.readsStarted === started) void this.poll();
    });
  }

  /**
   * Reads every waited-on job now, after any read under way, and settles the waits it can: for a
   * caller that knows a job finished, and for tests that drive the reads themselves.
   */
  async pollOnce(): Promise<void> {
    while (this.current) await this.current;
    await this.poll();
  }

  private poll(): Promise<void> {
    if (this.current) {
      this.again = true;
      return this.current;
    }
    if (this.closed) return Promise.resolve();
    this.readsStarted += 1;
    const run = this.read().finally(() => {
      this.current = undefined;
      this.afterRead();
    });
    this.current = run;
    return run;
  }

  private async read(): Promise<void> {
    if (this.timer !== undefined) this.timers.clearTimeout(this.timer);
    this.timer = undefined;
    this.again = false;
    const ids = [...this.waiting.keys()];
    for (let from = 0; from < ids.length && !this.closed; from += JOB_STATUS_BATCH) {
      const batch = ids.slice(from, from + JOB_STATUS_BATCH);
      let statuses: JobStatus[];
      try {
        statuses = await this.store.jobStatusMany({ jobIds: batch });
      } catch {
        // The store is unreachable for now: keep waiting, the next poll reads again. A wait that
        // must not outlast an outage gives timeoutMs.
        continue;
      }
      const found = new Map(statuses.map((status) => [status.id, status] as const));
      for (const id of batch) this.settle(id, found.get(id));
    }
  }

  /** After a read: read again soon if a wait began or a hint came meanwhile, else at the next interval. */
  private afterRead(): void {
    if (this.closed || this.waiting.size === 0) return;
    if (this.again) {
      // Whoever asked for this read restarted the backoff already, if it meant to.
      this.pollSoon(false);
      return;
    }
    const interval = this.intervalMs;
    this.intervalMs = Math.min(this.intervalMs * 2, this.maxPollMs);
    this.timer = this.timers.setTimeout(() => {
      this.timer = undefined;
      void this.poll();
    }, interval);
  }

  /** Settles the waits on `id` if the read says it finished (or does not exist). */
  private settle(id: string, status: JobStatus | undefined): void {
    const set = this.waiting.get(id);
    if (!set) return;
    if (status !== undefined && !isTerminalState(status.state)) {
      if (this.store.finish === 'lean') this.unfinished.set(id, status);
      return;
    }
    const vanished = status === undefined ? this.unfinished.get(id) : undefined;
    // An outcome each: callers never share an error object.
    for (const waiter of [...set]) {
      const outcome = vanished ? leanSuccess(id, vanished) : outcomeOf(id, status)!;
      if (outcome instanceof Error) waiter.reject(outcome);
      else waiter.resolve(outcome);
    }
  }
}

/** What a read means for a wait on `id`: its result, the error it rejects with, or null while the job is unfinished. */
function outcomeOf(id: string, status: JobStatus | undefined): JobWaitResult | Error | null {
  if (status === undefined) return new JobNotFoundError(id);
  if (!isTerminalState(status.state)) return null;
  if (status.state === 'succeeded') return { jobId: id, state: 'succeeded', output: status.output, attempt: status.attempt, finishedAt: status.finishedAt };
  return new JobFailedError(id, status.state as FailedJobState, status.lastError, status.attempt);
}

/**
 * A job a read saw unfinished that a store under the lean finish has since deleted: it succeeded
 * without output. Its attempt is the least it can have been: a running attempt succeeds as itself,
 * a waiting job's next attempt is one more than it was charged.
 */
function leanSuccess(id: string, seen: JobStatus): JobWaitResult {
  return { jobId: id, state: 'succeeded', output: null, attempt: seen.state === 'running' ? seen.attempt : seen.attempt + 1, finishedAt: null };
}

/** The keys `waitFor` takes. */
const WAIT_OPTIONS = ['timeoutMs', 'signal'];

/** `waitFor`'s options, checked: an object with an optional whole `timeoutMs` and an optional AbortSignal. */
export function checkWaitOptions(options: WaitForOptions, what = 'waitFor'): WaitForOptions {
  // An unknown key is refused: `{ timeout: 5 }` would otherwise wait with no timeout at all.
  const { timeoutMs, signal } = checkOptions(options, WAIT_OPTIONS, { what }) ?? {};
  if (timeoutMs !== undefined && (typeof timeoutMs !== 'number' || !Number.isInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > MAX_TIMEOUT_MS)) {
    throw new InvalidArgumentError(`timeoutMs must be a whole number of milliseconds from 1 to ${MAX_TIMEOUT_MS}, got ${showValue(timeoutMs)}.`, 'timeoutMs');
  }
  if (signal !== undefined && !(signal instanceof AbortSignal)) {
    throw new InvalidArgumentError("signal must be an AbortSignal, such as an AbortController's signal.", 'signal');
  }
  return { ...(timeoutMs === undefined ? {} : { timeoutMs }), ...(signal === undefined ? {} : { signal }) };
}
