import type { JobRecord, RetryPolicy } from '../core/index.js';
import type { BatchContext, BatchJob, ResolvedBatchOptions } from './batch-handler.js';
import type { AttemptContext } from './job-context.js';

/** How the node runs one wire name. */
export interface JobDefinition {
  readonly retry: RetryPolicy;
  /** Fail the attempt (and abort its signal) after this long. */
  readonly timeoutMs?: number;
  /** Give each attempt a transaction whose writes commit with the success outcome. */
  readonly transaction: boolean;
  /**
   * Checks the payload before the handler runs. Returning false or throwing quarantines the job
   * without using an attempt; any other return value accepts the payload.
   */
  readonly validate?: PayloadValidator;
  /** How many times one job may snooze; the next snooze dead-letters it. Default 100. */
  readonly maxSnoozes?: number;
  /** Set when the handler takes many jobs of its name in one call (see {@link JobInvoker.invokeBatch}). */
  readonly batch?: ResolvedBatchOptions;
}

/** A payload check: `false` or a throw rejects the payload. Assertion functions fit as they are. */
export type PayloadValidator = (payload: unknown) => unknown;

/**
 * Finds and calls handlers. The Nest module implements it with a DI scope per attempt; tests and
 * the simulator use plain functions.
 */
export interface JobInvoker {
  /** The definition for a wire name, or undefined when this node has no handler for it. */
  definition(name: string): JobDefinition | undefined;
  /** Runs the handler; resolves when it returns and rejects when it throws. */
  invoke(job: JobRecord, context: AttemptContext): Promise<void>;
  /**
   * Runs a batch handler once for `jobs`, all of wire name `context.name`; resolves when it
   * returns and rejects when it throws. Required when a definition has `batch`.
   */
  invokeBatch?(jobs: readonly BatchJob[], context: BatchContext): Promise<void>;
  /** The wire names whose handlers take many jobs at once, with their batch options. */
  batchHandlers?(): ReadonlyMap<string, ResolvedBatchOptions>;
}
