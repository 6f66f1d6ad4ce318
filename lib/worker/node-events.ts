import { EventEmitter } from 'node:events';
import type { JobState } from '../core/index.js';
import type { Outcome } from '../store/index.js';
import { describeError } from './log-text.js';
import type { NodeState } from './node-driver.js';
import type { SchedulerLogger } from './scheduler-logger.js';

/**
 * An attempt begins on this node: its hooks and handler run next, unless the job is quarantined
 * first (no handler here, a payload its validator refuses). Names and numbers only; the payload
 * never travels in an event.
 */
export interface AttemptStartedEvent {
  readonly jobId: string;
  /** The wire name. */
  readonly name: string;
  readonly queue: string;
  /** This attempt's number, from 1. */
  readonly attempt: number;
  readonly maxAttempts: number;
  readonly workerId: string;
  /** When the job became due: its run time (a reclaimed job keeps its original one). */
  readonly runAt: Date;
  /** When this node started the attempt, by the node's clock. */
  readonly startedAt: Date;
  /**
   * `startedAt - runAt`, at least 0: how long the job waited to be run. A job reclaimed after its
   * lease lapsed keeps its original `runAt`, so its wait includes the lapsed attempt. `runAt` is
   * the store's clock and `startedAt` the node's, so skew between them shows here too.
   */
  readonly waitMs: number;
}

/** Emitted as `settled` once an attempt's outcome was written, found stale, or dropped. */
export interface SettledEvent {
  readonly jobId: string;
  readonly attempt: number;
  /** The wire name. */
  readonly name: string;
  readonly queue: string;
  /** What the handler produced. */
  readonly kind: Outcome['kind'];
  /**
   * What the store did with it: `applied`; `stale` when the fence refused it because the lease was
   * no longer this node's; `dropped` when it was never written: the node already knew it had lost
   * the lease, the write failed, or the node had stopped (an attempt handed back at shutdown
   * settles as `dropped` when its handler returns).
   */
  readonly status: 'applied' | 'stale' | 'dropped';
  /** The job's state after an applied outcome. */
  readonly state?: JobState;
  /**
   * From the attempt's start until it ended on this node, by the node's clock: its hooks and
   * handler returned and, when the outcome rides in the attempt's own transaction, that commit.
   * The wait for a batched outcome write after that is not in it.
   */
  readonly durationMs: number;
  /**
   * The class of what failed the attempt (`TypeError`, `JobTimeoutError`, `PermanentJobError`):
   * never its message. Absent when the attempt succeeded or was quarantined.
   */
  readonly errorType?: string;
}

/** The node learned that an attempt's lease is gone; it aborts the attempt's signal with `reason`. */
export interface LeaseLostEvent {
  readonly jobId: string;
  readonly attempt: number;
  /** `lease_lost`: the store said another worker may own it now. `lease_expired`: renewals stopped getting through for a whole lease. */
  readonly reason: 'lease_lost' | 'lease_expired';
}

/** A claim statement failed; the node claims again at its next poll or wake-up. */
export interface ClaimFailedEvent {
  /** The error's class and message, escaped and cut as the log line's are. */
  readonly error: string;
}

/** The node moved from one state to another (`idle`, `running`, `draining`, `relinquishing`, `stopped`). */
export interface NodeStateChangedEvent {
  readonly from: NodeState;
  readonly to: NodeState;
}

/** What `node.events` emits, by event name. */
export interface WorkerNodeEvents {
  attemptStarted: [AttemptStartedEvent];
  settled: [SettledEvent];
  leaseLost: [LeaseLostEvent];
  claimFailed: [ClaimFailedEvent];
  stateChanged: [NodeStateChangedEvent];
}

/**
 * The node's typed event emitter. A listener runs synchronously inside the node's own work, so one
 * that throws, or an async one that rejects, must not break it nor keep the event from the
 * listeners after it: each call is guarded on its own, and what it threw is logged.
 */
export class NodeEventEmitter extends EventEmitter<WorkerNodeEvents> {
  constructor(private readonly logger: SchedulerLogger) {
    super();
  }

  /** @internal Emits `event` to each listener in turn; what a listener throws or rejects with is logged. */
  publish<K extends keyof WorkerNodeEvents>(event: K, ...args: WorkerNodeEvents[K]): void {
    // rawListeners keeps `once` wrappers, which remove themselves when called.
    for (const listener of this.rawListeners(event) as Array<(...args: WorkerNodeEvents[K]) => unknown>) {
      try {
        const result = listener.apply(this, args);
        if (result !== null && typeof (result as { then?: unknown })?.then === 'function') {
          (result as Promise<unknown>).then(undefined, (error: unknown) => this.threw(event, error));
        }
      } catch (error) {
        this.threw(event, error);
      }
    }
  }

  private threw(event: string, error: unknown): void {
    this.logger.warn(`a listener of the node's ${event} event threw (${describeError(error)}); the node carries on.`);
  }
}
