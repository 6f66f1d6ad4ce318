import { EventEmitter } from 'node:events';
import type { JobState } from '../core/index.js';
import type { Outcome } from '../store/index.js';
import { describeError } from './log-text.js';
import type { NodeState } from './node-driver.js';
import type { SchedulerLogger } from './scheduler-logger.js';

/**
 * An attempt is about to run: its hooks and handler start next. Names and numbers only; the
 * payload never travels in an event.
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
  /** `startedAt - runAt`, at least 0: how long the job waited to be run. */
  readonly waitMs: number;
}

/** Emitted as `settled` once an attempt's outcome was written, found stale, or dropped. */
export interface SettledEvent {
  readonly jobId: string;
  readonly attempt: number;
  /** The wire name; empty for an attempt this node no longer knows (it never happens in a running node). */
  readonly name: string;
  readonly queue: string;
  /** What the handler produced. */
  readonly kind: Outcome['kind'];
  /**
   * What the store did with it: `applied`; `stale` when the fence refused it because the lease was
   * no longer this node's; `dropped` when it was never sent (the node already knew it had lost the
   * lease) or its write failed.
   */
  readonly status: 'applied' | 'stale' | 'dropped';
  /** The job's state after an applied outcome. */
  readonly state?: JobState;
  /** From the attempt's start to this event, by the node's clock; 0 for an attempt it did not start. */
  readonly durationMs: number;
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
 * that throws must not break it: the throw is logged and the node carries on.
 */
export class NodeEventEmitter extends EventEmitter<WorkerNodeEvents> {
  constructor(private readonly logger: SchedulerLogger) {
    super();
  }

  /** Emits `event` to its listeners; a listener's throw is logged, never raised into the node. */
  publish<K extends keyof WorkerNodeEvents>(event: K, ...args: WorkerNodeEvents[K]): void {
    try {
      (this.emit as (event: K, ...args: WorkerNodeEvents[K]) => boolean)(event, ...args);
    } catch (error) {
      this.logger.warn(`a listener of the node's ${event} event threw (${describeError(error)}); the node carries on.`);
    }
  }
}
