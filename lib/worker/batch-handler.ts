import { InvalidArgumentError, showValue } from '../core/index.js';
import type { JobContext } from './job-context.js';
import type { SchedulerLogger } from './scheduler-logger.js';

/** The most jobs one call of a batch handler may take. */
export const MAX_BATCH_HANDLER_SIZE = 1_000;
/** The longest a batch handler may wait for its batch to fill. */
export const MAX_BATCH_WAIT_MS = 60_000;

/**
 * How a handler that takes many jobs at once is fed: up to `size` due jobs of its name per call.
 * A batch starts once it holds `size` jobs, or `waitMs` after its first job was claimed, whichever
 * comes first; with `waitMs` 0 (the default) it starts with the jobs the node holds when a slot is
 * free. One batch takes one of the node's `concurrency` slots.
 */
export interface BatchHandlerOptions {
  /** The most jobs one call receives: a whole number from 1 to 1,000. */
  readonly size: number;
  /** How long a batch may wait to fill, in milliseconds: 0 (default) to 60,000, and under half the lease. */
  readonly waitMs?: number;
}

/** {@link BatchHandlerOptions} checked, with the default filled in. */
export interface ResolvedBatchOptions {
  readonly size: number;
  readonly waitMs: number;
}

/**
 * One job of a batch handler's call: its own context (payload, signal, logger, `setOutput`,
 * `snooze`, `reportProgress`), fenced on its own lease, plus {@link fail}. A job the handler does
 * not fail succeeds when the call returns; a throw from the call fails every job not already
 * failed, each retried on its own policy.
 */
export interface BatchJob<TPayload = unknown> extends JobContext<TPayload> {
  /**
   * Fails this job alone: it is retried as if its handler had thrown `error` (a `PermanentJobError`
   * dead-letters it), while the rest of the batch succeeds. The first call wins.
   */
  fail(error: unknown): void;
}

/** What a batch handler's call knows beside its jobs. */
export interface BatchContext {
  /** The wire name every job of the call carries. */
  readonly name: string;
  /** How many jobs the call received. */
  readonly size: number;
  /**
   * Aborted when the call should stop: the handler's timeout passed, or every job of the call was
   * aborted (lost leases, cancels, shutdown). Each job's own `signal` says what happened to it.
   */
  readonly signal: AbortSignal;
  /** A logger whose lines carry the wire name and the call's size, never a payload. */
  readonly logger: SchedulerLogger;
}

/** Checks a handler's `batch` option before a node is built, with one sentence per mistake. */
export function resolveBatchOptions(value: unknown, argument = 'batch'): ResolvedBatchOptions {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new InvalidArgumentError(`${argument} must be an object { size, waitMs? }, got ${showValue(value)}.`, argument);
  }
  const { size, waitMs = 0, ...rest } = value as Record<string, unknown>;
  const extra = Object.keys(rest)[0];
  if (extra !== undefined) throw new InvalidArgumentError(`${argument} has no option ${showValue(extra)}; it takes size and waitMs.`, argument);
  if (typeof size !== 'number' || !Number.isInteger(size) || size < 1 || size > MAX_BATCH_HANDLER_SIZE) {
    throw new InvalidArgumentError(`${argument}.size must be a whole number from 1 to ${MAX_BATCH_HANDLER_SIZE.toLocaleString('en-US')}, got ${showValue(size)}.`, `${argument}.size`);
  }
  if (typeof waitMs !== 'number' || !Number.isInteger(waitMs) || waitMs < 0 || waitMs > MAX_BATCH_WAIT_MS) {
    throw new InvalidArgumentError(`${argument}.waitMs must be a whole number of milliseconds from 0 to ${MAX_BATCH_WAIT_MS.toLocaleString('en-US')}, got ${showValue(waitMs)}.`, `${argument}.waitMs`);
  }
  return Object.freeze({ size, waitMs });
}

/**
 * Refuses a batch wait the lease cannot cover: a job waits for its batch on a lease the node
 * renews, but a wait of half the lease or more would leave a slow heartbeat no room.
 */
export function assertBatchWaitFitsLease(name: string, batch: ResolvedBatchOptions, leaseMs: number): void {
  if (batch.waitMs * 2 >= leaseMs) {
    throw new InvalidArgumentError(`the batch handler of ${showValue(name)} waits up to ${batch.waitMs} ms for its batch, which must be under half the lease (leaseMs ${leaseMs}); lower batch.waitMs or raise leaseMs.`, 'batch.waitMs');
  }
}
