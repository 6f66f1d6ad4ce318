import type { Clock, RandomSource } from '../core/index.js';
import type { JobStore } from '../store/index.js';
import type { AttemptHook } from './attempt-hook.js';
import type { JobInvoker } from './job-invoker.js';
import type { NodeEvent, NodeState } from './node-driver.js';
import type { ProgressBoard } from './progress-board.js';
import type { SchedulerLogger } from './scheduler-logger.js';
import type { Timers } from './timers.js';
import type { TransitionObserver } from './transition-observer.js';
import type { resolveWorkerOptions, ResolvedWorkerOptions, WorkerOptions } from './worker-options.js';

/** What a `WorkerNode` is built from. Only the store and the invoker are required. */
export interface WorkerNodeDeps {
  readonly store: JobStore;
  readonly invoker: JobInvoker;
  /** How the node runs; options that {@link resolveWorkerOptions} returned are used as they are. */
  readonly options?: WorkerOptions | ResolvedWorkerOptions;
  readonly logger?: SchedulerLogger;
  /** The node's own clock, for timers and self-fencing; the store keeps its own for leases. */
  readonly clock?: Clock;
  readonly timers?: Timers;
  readonly random?: RandomSource;
  /**
   * Transition observers this node delivers to, read when the node starts (so a list filled in
   * later, as Nest discovery does, counts). With none, no dispatcher runs at all.
   */
  readonly observers?: readonly TransitionObserver[];
  /**
   * Wrapped around each handler invocation, the first outermost: tracing, metrics, context
   * propagation (see {@link AttemptHook}). With none, attempts run exactly as they would without.
   */
  readonly attemptHooks?: readonly AttemptHook[];
}

/** Counters a node keeps, for logs, metrics and tests. */
export interface WorkerStats {
  claimed: number;
  succeeded: number;
  failed: number;
  deadLettered: number;
  quarantined: number;
  cancelled: number;
  /** Attempts that snoozed their job (`ctx.snooze`): it waits to run again, with its budget intact. */
  snoozed: number;
  /** Outcomes the fenced write refused because the lease was no longer this node's. */
  staleOutcomes: number;
  /** Outcomes not sent because the node already knew its lease was gone. */
  forfeitedOutcomes: number;
  leasesLost: number;
  relinquished: number;
  sweptLeases: number;
  /** Finished jobs this node deleted under the retention setting. */
  purgedJobs: number;
}

/** What a health check reads of a node (`WorkerNode.health()`). */
export interface NodeHealth {
  readonly status: NodeState;
  /**
   * The last time a claim, a heartbeat or a registry beat of this node reached the store, by the
   * node's clock; null before the first. An idle node claims on every poll and a busy one
   * heartbeats, so on a working node this is never older than the longer of the two intervals.
   */
  readonly lastContactAt: Date | null;
  /** When the node started claiming, by its clock; null before. */
  readonly startedAt: Date | null;
  /**
   * The wake-up channel: `connected`; `connecting` before it was first up; `disconnected` once it
   * was lost, while it reconnects (polling still runs); `none` when the store needs no connection.
   */
  readonly wakeListener: 'connected' | 'connecting' | 'disconnected' | 'none';
  /** Attempts running or being recorded. */
  readonly inFlight: number;
}

/** What each part of a node is built with: the node's own parts, and how a part reports back to it. */
export interface NodePartDeps {
  readonly store: JobStore;
  readonly workerId: string;
  readonly options: ResolvedWorkerOptions;
  readonly clock: Clock;
  readonly timers: Timers;
  readonly logger: SchedulerLogger;
  readonly progress: ProgressBoard;
  /** Steps the node's driver. */
  readonly emit: (event: NodeEvent) => void;
  /** Notes that a call reached the store (see {@link NodeHealth.lastContactAt}). */
  readonly contact: () => void;
}
