import type { JobState } from '../core/index.js';

/** One state change of a job, as an observer receives it. */
export interface TransitionEvent {
  /**
   * Stable across redeliveries: the same transition always carries the same id, so an observer
   * that must act once dedupes on it.
   */
  readonly eventId: string;
  readonly jobId: string;
  /** The job's wire name. */
  readonly name: string;
  /** The state the job entered. */
  readonly state: JobState;
  readonly attempt: number;
  readonly at: Date;
  /** The error recorded with the change, under the `transitions_and_errors` history policy. */
  readonly error: string | null;
}

/**
 * A consumer of the transition log. Delivery is at least once, in log order, after the transition
 * committed; an observer only reads, so it can never change the job it hears about.
 */
export interface TransitionObserver {
  /** Names the observer's cursor in the store: keep it stable across deployments. */
  readonly id: string;
  /** Wire names to hear about; all jobs when absent. */
  readonly jobs?: readonly string[];
  /** States to hear about. */
  readonly to: readonly JobState[];
  /** Throwing (or rejecting) redelivers this event and the ones after it, after a backoff. */
  deliver(event: TransitionEvent): Promise<void> | void;
}
