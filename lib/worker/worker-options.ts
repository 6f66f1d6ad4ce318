import {
  assertNonEmptyString,
  checkOptions,
  assertQueueName,
  DEFAULT_RETRY_POLICY,
  InvalidArgumentError,
  resolveRetryPolicy,
  showValue,
  type RetryPolicy,
} from '../core/index.js';
import { DEFAULT_QUEUE, MAX_BATCH, MAX_LEASE_MS } from '../store/index.js';
import { ERROR_LOG_DETAILS, type ErrorLogDetail } from './log-text.js';

/** How a worker node runs. Every field has a default. */
export interface WorkerOptions {
  /** Queues this node claims from. Default `['default']`. */
  readonly queues?: readonly string[];
  /** Attempts run at once on this node. Default 10. */
  readonly concurrency?: number;
  /** Lease per claim and heartbeat. Default 30 s; must cover at least two heartbeats. */
  readonly leaseMs?: number;
  /** Time between heartbeats. Default 10 s. */
  readonly heartbeatIntervalMs?: number;
  /** Time between claims when no hint arrives. Default 1 s. Polling alone is always correct. */
  readonly pollIntervalMs?: number;
  /** Most jobs one claim asks for. Default 200. */
  readonly claimBatchSize?: number;
  /**
   * Most jobs the node claims ahead of a free slot, into a local queue whose leases are renewed
   * and handed back like running ones. It holds only as many as its handlers would start within
   * `claimAheadMs` at their average time, so slow handlers claim nothing ahead. Default 500; 0
   * turns it off.
   */
  readonly claimAhead?: number;
  /** How long, in handler time, a job claimed ahead may expect to wait for a slot. Default 100 ms. */
  readonly claimAheadMs?: number;
  /** How long shutdown waits for running attempts before aborting and handing them back. Default 10 s. */
  readonly shutdownGraceMs?: number;
  /**
   * Time between maintenance sweeps (lapsed leases, dependency edges, retention, the history
   * bound). One node of the cluster sweeps per interval: the one holding the sweep's lease, which
   * it renews each interval and another node takes over within an interval of its end. Default 15 s.
   */
  readonly maintenanceIntervalMs?: number;
  /** Retry policy for handlers that do not set their own. */
  readonly retry?: Partial<RetryPolicy>;
  /** A stable id for this node's leases. Default: host name, process id and a random suffix. */
  readonly workerId?: string;
  /** Mint the occurrences of recurring schedules on this node. Default true. */
  readonly scheduling?: boolean;
  /** Longest pause between minting passes when no tick is due sooner. Default 15 s. */
  readonly scheduleCheckIntervalMs?: number;
  /**
   * Succeeded and cancelled jobs (with their history) are deleted this long after they finished,
   * in small batches by the maintenance sweep. Default 24 h; null keeps them. Dead-lettered and
   * quarantined jobs are never deleted: they wait for an operator.
   */
  readonly retentionMs?: number | null;
  /** History entries kept per job; a job that passes it is trimmed by the next sweep. Default 64. */
  readonly historyPerJob?: number;
  /** Time between observer delivery passes. Default 1 s. */
  readonly observerPollIntervalMs?: number;
  /** Backoff of an observer whose delivery failed. Default: 1 s doubling to 5 min, with jitter. */
  readonly observerRetry?: Partial<RetryPolicy>;
  /**
   * How much of a handler's (or an observer's) error its log line carries: `class`, `message`
   * (default: the class and 200 characters of the message) or `stack`. Always one line, escaped.
   */
  readonly errorLogDetail?: ErrorLogDetail;
}

/** Set only on what {@link resolveWorkerOptions} returns; it exists in the types alone. */
declare const resolved: unique symbol;

/**
 * Worker options checked and completed by {@link resolveWorkerOptions}: every default filled in.
 * The brand makes "already resolved" a type, so code that holds one passes it down instead of
 * resolving again, and a `WorkerNode` given one uses it as it is.
 */
export type ResolvedWorkerOptions = Required<Omit<WorkerOptions, 'retry' | 'workerId' | 'observerRetry'>> & {
  readonly retry: RetryPolicy;
  readonly observerRetry: RetryPolicy;
  readonly workerId?: string;
  readonly [resolved]: true;
};

/** The objects resolveWorkerOptions returned; a copy or a literal is resolved again. */
const RESOLVED = new WeakSet<object>();

/** The default of every worker option that has one (docs/module-options.md lists them). */
export const WORKER_DEFAULTS = Object.freeze({
  queues: [DEFAULT_QUEUE] as readonly string[],
  concurrency: 10,
  leaseMs: 30_000,
  heartbeatIntervalMs: 10_000,
  pollIntervalMs: 1_000,
  claimBatchSize: 200,
  claimAhead: 500,
  claimAheadMs: 100,
  shutdownGraceMs: 10_000,
  maintenanceIntervalMs: 15_000,
  scheduling: true,
  scheduleCheckIntervalMs: 15_000,
  retentionMs: 86_400_000 as number | null,
  historyPerJob: 64,
  observerPollIntervalMs: 1_000,
  errorLogDetail: 'message' as ErrorLogDetail,
});

/** Every key {@link WorkerOptions} has: those with a default, and the three without. */
export const WORKER_OPTION_KEYS: readonly string[] = Object.freeze([...Object.keys(WORKER_DEFAULTS), 'retry', 'workerId', 'observerRetry']);

/**
 * Refuses a key {@link WorkerOptions} does not have (`{ concurency: 4 }` would otherwise run 10
 * at once, in silence). Options {@link resolveWorkerOptions} returned pass as they are.
 */
export function checkWorkerOptionKeys<T extends object>(options: T | undefined): T | undefined {
  if (options === undefined || RESOLVED.has(options)) return options;
  return checkOptions(options, WORKER_OPTION_KEYS, { what: 'worker', docs: 'docs/module-options.md' });
}

function whole(value: unknown, name: string, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new InvalidArgumentError(`${name} must be a whole number from ${min} to ${max}, got ${showValue(value)}.`, name);
  }
  return value;
}

function bool(value: unknown, name: string): boolean {
  if (typeof value !== 'boolean') throw new InvalidArgumentError(`${name} must be true or false, got ${showValue(value)}.`, name);
  return value;
}

function errorLogDetail(value: unknown): ErrorLogDetail {
  if (!ERROR_LOG_DETAILS.includes(value as ErrorLogDetail)) {
    throw new InvalidArgumentError(`errorLogDetail must be "class", "message" or "stack", got ${showValue(value)}.`, 'errorLogDetail');
  }
  return value as ErrorLogDetail;
}

/**
 * Fills in defaults and refuses settings that cannot work, each with one sentence. Options it
 * already resolved come back as they are, so the check runs once however far they are passed.
 */
export function resolveWorkerOptions(options: WorkerOptions | ResolvedWorkerOptions = {}): ResolvedWorkerOptions {
  if (RESOLVED.has(options)) return options as ResolvedWorkerOptions;
  const o = { ...WORKER_DEFAULTS, ...Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)) } as WorkerOptions &
    typeof WORKER_DEFAULTS;
  if (!Array.isArray(o.queues) || o.queues.length === 0) {
    throw new InvalidArgumentError('queues must be a non-empty array of queue names.', 'queues');
  }
  o.queues.forEach((queue, i) => assertQueueName(queue, `queues[${i}]`));
  const concurrency = whole(o.concurrency, 'concurrency', 1, 10_000);
  const heartbeatIntervalMs = whole(o.heartbeatIntervalMs, 'heartbeatIntervalMs', 1, MAX_LEASE_MS);
  const leaseMs = whole(o.leaseMs, 'leaseMs', 1, MAX_LEASE_MS);
  if (leaseMs < 2 * heartbeatIntervalMs) {
    throw new InvalidArgumentError(
      `leaseMs (${leaseMs}) must cover at least two heartbeats (2 × heartbeatIntervalMs = ${2 * heartbeatIntervalMs}), or one late heartbeat loses the lease.`,
      'leaseMs',
    );
  }
  // The rule every store applies to the worker id of a claim, checked here so a bad one stops the boot.
  if (o.workerId !== undefined) assertNonEmptyString(o.workerId, 'workerId', 200);
  const checked: Omit<ResolvedWorkerOptions, typeof resolved> = {
    // Frozen: the node passes this very array to every claim, and the store checks a frozen list once.
    queues: Object.freeze([...new Set(o.queues)]),
    concurrency,
    leaseMs,
    heartbeatIntervalMs,
    pollIntervalMs: whole(o.pollIntervalMs, 'pollIntervalMs', 1, 3_600_000),
    claimBatchSize: whole(o.claimBatchSize, 'claimBatchSize', 1, MAX_BATCH),
    claimAhead: whole(o.claimAhead, 'claimAhead', 0, MAX_BATCH),
    claimAheadMs: whole(o.claimAheadMs, 'claimAheadMs', 1, 3_600_000),
    shutdownGraceMs: whole(o.shutdownGraceMs, 'shutdownGraceMs', 0, 3_600_000),
    maintenanceIntervalMs: whole(o.maintenanceIntervalMs, 'maintenanceIntervalMs', 1, 3_600_000),
    scheduling: bool(o.scheduling, 'scheduling'),
    scheduleCheckIntervalMs: whole(o.scheduleCheckIntervalMs, 'scheduleCheckIntervalMs', 1, 3_600_000),
    retentionMs: o.retentionMs === null ? null : whole(o.retentionMs, 'retentionMs', 0, 10 * 365 * 86_400_000),
    historyPerJob: whole(o.historyPerJob, 'historyPerJob', 1, 100_000),
    observerPollIntervalMs: whole(o.observerPollIntervalMs, 'observerPollIntervalMs', 1, 3_600_000),
    observerRetry: resolveRetryPolicy(o.observerRetry, DEFAULT_RETRY_POLICY, 'observerRetry'),
    errorLogDetail: errorLogDetail(o.errorLogDetail),
    retry: resolveRetryPolicy(o.retry, DEFAULT_RETRY_POLICY),
    workerId: o.workerId,
  };
  const result = Object.freeze(checked) as ResolvedWorkerOptions;
  RESOLVED.add(result);
  return result;
}
