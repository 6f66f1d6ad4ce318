import { IllegalTransitionError, showValue, type JobState } from '../../core/index.js';
import type { NewJob } from '../enqueue-input.js';
import type { EnqueueResult } from '../job-store.js';

/**
 * The states in which a job holds its unique key: every state but the terminal ones. A job that
 * finishes frees its key; the stores' partial unique indexes use the same list.
 */
export const UNIQUE_HOLDER_STATES: readonly JobState[] = Object.freeze(['scheduled', 'awaiting_parents', 'running']);

/** A stored job that holds a unique key. */
export interface UniqueHolder {
  readonly id: string;
  readonly state: JobState;
  readonly attempt: number;
}

/** A stored holder to give a new payload and run time, if it still has not started when written. */
export interface UniqueReplace {
  readonly id: string;
  /** JSON text. */
  readonly payload: string;
  /** An absolute instant, or null to use the store's clock plus `delayMs`. */
  readonly runAt: number | null;
  readonly delayMs: number;
}

/** Where a deduplicated job of the batch went. */
export interface UniqueMatch {
  /** The job that holds the key: stored, or inserted by this very batch. */
  readonly holderId: string;
  /** The job asked to replace the holder, and the holder had not started. */
  readonly replace: boolean;
  readonly inBatch: boolean;
}

export interface UniquePlan {
  /** The jobs to insert, in batch order, with parents that were deduplicated mapped to their holders. */
  readonly insert: readonly NewJob[];
  /** Stored holders to rewrite, one entry each (the batch's last replacement wins). */
  readonly replace: readonly UniqueReplace[];
  /** The deduplicated jobs, by the id they were enqueued under. */
  readonly matched: ReadonlyMap<string, UniqueMatch>;
}

/** The lookup key of (wire name, unique key). */
export function uniqueSlot(name: string, key: string): string {
  return JSON.stringify([name, key]);
}

/** True when a holder was never claimed, so `replace` may still rewrite it. */
export function notStarted(holder: { readonly state: JobState; readonly attempt: number }): boolean {
  return holder.attempt === 0 && (holder.state === 'scheduled' || holder.state === 'awaiting_parents');
}

export function hasUniqueKeys(jobs: readonly NewJob[]): boolean {
  return jobs.some((job) => job.uniqueKey != null);
}

/**
 * Decides, before anything is written, what a batch does with its unique keys. The batch acts as
 * its enqueues would one after another: a job whose key is held, by a stored job (`stored`, by
 * {@link uniqueSlot}) or by an earlier job of the batch, writes no job of its own. In `replace` mode
 * it hands the holder its payload and run time, if the holder has not started. A job of the batch
 * that depends on a deduplicated job waits for the holder instead.
 *
 * `jobs` must not hold jobs whose id is already stored: those write nothing and claim no key.
 */
export function planUnique(jobs: readonly NewJob[], stored: ReadonlyMap<string, UniqueHolder>): UniquePlan {
  const insert: NewJob[] = [];
  const inBatch = new Map<string, number>();
  const replace = new Map<string, UniqueReplace>();
  const matched = new Map<string, UniqueMatch>();
  for (const job of jobs) {
    if (job.uniqueKey == null) {
      insert.push(job);
      continue;
    }
    const slot = uniqueSlot(job.name, job.uniqueKey);
    const wantsReplace = job.uniqueKeyMode === 'replace';
    const earlier = inBatch.get(slot);
    if (earlier !== undefined) {
      const holder = insert[earlier]!;
      if (wantsReplace) insert[earlier] = { ...holder, payload: job.payload, runAt: job.runAt, delayMs: job.delayMs };
      matched.set(job.id, { holderId: holder.id, replace: wantsReplace, inBatch: true });
      continue;
    }
    const holder = stored.get(slot);
    if (holder) {
      const rewrite = wantsReplace && notStarted(holder);
      if (rewrite) replace.set(holder.id, { id: holder.id, payload: job.payload, runAt: job.runAt, delayMs: job.delayMs });
      matched.set(job.id, { holderId: holder.id, replace: rewrite, inBatch: false });
      continue;
    }
    inBatch.set(slot, insert.length);
    insert.push(job);
  }
  return { insert: matched.size === 0 ? insert : insert.map((job) => remapParents(job, matched)), replace: [...replace.values()], matched };
}

function remapParents(job: NewJob, matched: ReadonlyMap<string, UniqueMatch>): NewJob {
  if (!job.dependsOn?.some((parent) => matched.has(parent))) return job;
  return { ...job, dependsOn: [...new Set(job.dependsOn.map((parent) => matched.get(parent)?.holderId ?? parent))] };
}

/**
 * The result of each job of a batch. `created` holds the ids inserted; `replaced` the stored
 * holders whose rewrite applied (on PostgreSQL a holder can be claimed between the lookup and the
 * write, and then it is kept as it is).
 */
export function enqueueResults(
  jobs: readonly NewJob[],
  created: ReadonlySet<string>,
  plan: UniquePlan | null,
  replaced: ReadonlySet<string> = new Set(),
): EnqueueResult[] {
  return jobs.map((job) => {
    const match = plan?.matched.get(job.id);
    if (!match) return { id: job.id, created: created.has(job.id) };
    const applied = match.replace && (match.inBatch ? created.has(match.holderId) : replaced.has(match.holderId));
    return { id: match.holderId, created: false, deduplicated: applied ? 'replaced' : 'kept' };
  });
}

/** Replay would give a job back a key another unfinished job holds now. */
export function uniqueKeyTakenError(job: { readonly id: string; readonly name: string; readonly state: JobState }, key: string, holderId: string): IllegalTransitionError {
  return new IllegalTransitionError(
    job.id,
    'replay',
    job.state,
    `Job ${job.id} cannot be replayed while job ${holderId} holds its unique key ${showValue(key)} for ${job.name}; replay it once that job has finished, or cancel that job first.`,
  );
}
