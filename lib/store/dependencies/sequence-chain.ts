import { IllegalTransitionError, showValue, type JobState } from '../../core/index.js';
import type { NewJob } from '../enqueue-input.js';

/** A batch with each sequenced job pointed at the job it runs after, and each sequence's new tail. */
export interface ChainedBatch {
  readonly jobs: readonly NewJob[];
  /** The last job of each sequence the batch adds to, by key: what the store records as its tail. */
  readonly tails: ReadonlyMap<string, string>;
}

/** The distinct sequence keys of a batch, sorted: the order a store locks them in. */
export function sequenceKeys(jobs: readonly NewJob[]): string[] {
  const keys = new Set<string>();
  for (const job of jobs) if (job.sequence) keys.add(job.sequence.key);
  return [...keys].sort();
}

/** True when some job of the batch joins a sequence. */
export function hasSequences(jobs: readonly NewJob[]): boolean {
  return jobs.some((job) => job.sequence !== undefined);
}

/**
 * Appends a batch's sequenced jobs to their sequences, in the batch's order: the first job of a key
 * runs after the key's stored tail (`tails`, read under the key's lock), each later one after the
 * one before it in the batch. Jobs in `existing` (an id already stored: a repeated enqueue) join
 * nothing, since their row is not written again.
 */
export function chainSequences(jobs: readonly NewJob[], tails: ReadonlyMap<string, string | null>, existing: ReadonlySet<string> = new Set()): ChainedBatch {
  const last = new Map<string, string | null>(tails);
  const newTails = new Map<string, string>();
  const chained = jobs.map((job) => {
    if (job.sequence === undefined || existing.has(job.id)) return job;
    const after = last.get(job.sequence.key) ?? null;
    last.set(job.sequence.key, job.id);
    newTails.set(job.sequence.key, job.id);
    return after === null ? job : { ...job, sequenceAfter: after };
  });
  return { jobs: chained, tails: newTails };
}

/**
 * Refuses the replay of a failed job whose sequence went on without it: a later job of its key ran
 * past its failure (`afterFailure: 'continue'`), so running it again would run it out of order,
 * perhaps beside that job. Every store checks under the key's lock, as an enqueue of the key takes it.
 */
export function sequenceWentOnError(job: { readonly id: string; readonly state: JobState }, key: string): IllegalTransitionError {
  return new IllegalTransitionError(
    job.id,
    'replay',
    job.state,
    `Job ${job.id} cannot be replayed: sequence ${showValue(key)} went on past it (the job after it ran with afterFailure "continue"), so it would run out of order; enqueue a new job into the sequence instead.`,
  );
}
