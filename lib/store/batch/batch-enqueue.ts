import { InvalidArgumentError, type BatchCallbackKind, type SchedulerLimits } from '../../core/index.js';
import { normalizeEnqueue, type EnqueueInput, type NewJob } from '../enqueue-input.js';
import type { BatchCallbackIds, EnqueueBatchParams, EnqueueBatchResult, EnqueueResult } from '../job-store.types.js';
import { newUuidV7 } from '../new-uuid-v7.js';

/** Most jobs one batch may hold: each callback writes an edge per job, in the batch's one transaction. */
export const MAX_BATCH_JOBS = 10_000;

/** The callbacks a batch may have, the key each is given under, and the dependency mode that makes it one. */
const CALLBACKS = [
  ['onSuccess', 'success', 'on_success'],
  ['onComplete', 'complete', 'on_any_terminal'],
  ['onFailure', 'failure', 'on_failure'],
] as const;

/** Options a job of a batch may not carry: each may write no job of its own, or name it in advance. */
const NOT_IN_BATCH = ['id', 'uniqueKey', 'uniqueKeyMode', 'debounce', 'throttle'] as const;
/** Options a callback may not carry besides those: the batch decides what it waits for. */
const NOT_ON_CALLBACK = ['dependsOn', 'dependencyMode', 'sequence'] as const;

/** A batch, checked and normalized: the jobs to insert (the batch's, then its callbacks) and how to report them. */
export interface PlannedBatch {
  readonly batchId: string;
  readonly jobs: NewJob[];
  /** How many of `jobs` are the batch's own; the rest are callbacks in `callbacks`' order. */
  readonly size: number;
  readonly callbacks: readonly (readonly ['onSuccess' | 'onComplete' | 'onFailure', string])[];
}

/**
 * Checks a batch and turns it into the jobs one enqueue writes: each of the batch's jobs marked with
 * a fresh batch id, and each callback waiting on all of them in its mode. Refuses, before anything
 * is written, an empty or oversized batch, no callback, and options a batch's jobs cannot carry.
 */
export function planBatch(params: Pick<EnqueueBatchParams, 'jobs' | 'onSuccess' | 'onComplete' | 'onFailure'>, limits: SchedulerLimits): PlannedBatch {
  const { jobs } = params;
  if (!Array.isArray(jobs)) throw new InvalidArgumentError('enqueueBatch needs an array of jobs.', 'jobs');
  if (jobs.length === 0) throw new InvalidArgumentError('enqueueBatch needs at least one job: a batch with none would never end.', 'jobs');
  if (jobs.length > MAX_BATCH_JOBS) {
    throw new InvalidArgumentError(`enqueueBatch takes at most ${MAX_BATCH_JOBS} jobs, got ${jobs.length}; split the work into several batches.`, 'jobs');
  }
  const given = CALLBACKS.filter(([key]) => params[key] !== undefined);
  if (given.length === 0) throw new InvalidArgumentError('enqueueBatch needs a callback: onSuccess, onComplete or onFailure.', 'onComplete');
  const batchId = newUuidV7();
  const members = jobs.map((input, index) => {
    refuse(input, NOT_IN_BATCH, `jobs[${index}]`, 'a job of a batch');
    return { ...normalizeEnqueue(input, limits, jobs.length > 1 ? index : undefined), batchId };
  });
  const ids = members.map((job) => job.id);
  const callbacks = given.map(([key, kind, mode]): NewJob => {
    const input = params[key]!;
    refuse(input, [...NOT_IN_BATCH, ...NOT_ON_CALLBACK], key, 'a batch callback');
    // Checked without its parents (so the check does not list 10,000 ids in an error), then given them.
    const job = normalizeEnqueue(input, limits);
    return { ...job, dependsOn: ids, dependencyMode: mode, batchId, batchCallback: kind as BatchCallbackKind };
  });
  return { batchId, jobs: [...members, ...callbacks], size: members.length, callbacks: given.map(([key], i) => [key, callbacks[i]!.id] as const) };
}

/** The batch's result, from the enqueue results of {@link PlannedBatch.jobs} in their order. */
export function batchResult(plan: PlannedBatch, results: readonly EnqueueResult[]): EnqueueBatchResult {
  const callbacks: Record<string, string> = {};
  for (const [key, id] of plan.callbacks) callbacks[key] = id;
  return { batchId: plan.batchId, jobs: results.slice(0, plan.size), callbacks: callbacks as BatchCallbackIds };
}

function refuse(input: EnqueueInput, keys: readonly string[], where: string, what: string): void {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) {
    throw new InvalidArgumentError(`${where} must be an object with a name and a payload.`, where);
  }
  for (const key of keys) {
    if ((input as unknown as Record<string, unknown>)[key] !== undefined) {
      throw new InvalidArgumentError(`${where}.${key} is not allowed on ${what}: ${REASONS[key] ?? 'the batch sets it'}.`, `${where}.${key}`);
    }
  }
}

const REASONS: Record<string, string> = {
  id: 'every job of a batch gets a fresh id',
  uniqueKey: 'a job of a batch must be written every time, and a held key would write none',
  uniqueKeyMode: 'a job of a batch must be written every time, and a held key would write none',
  debounce: 'a job of a batch must be written every time, and a debounce may write none',
  throttle: 'a job of a batch must be written every time, and a throttle may write none',
  dependsOn: 'a callback waits for the jobs of its batch',
  dependencyMode: 'the callback kind sets its mode',
  sequence: 'a callback waits for the jobs of its batch, not for a sequence',
};
