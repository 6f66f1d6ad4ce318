import { IllegalTransitionError, showValue, type JobState } from '../../core/index.js';
import type { NewJob, UniqueKeyMode } from '../enqueue-input.js';
import type { Deduplicated, EnqueueResult } from '../job-store.js';
import type { WindowKind } from '../window/job-window.js';

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

/**
 * A stored holder to give a new payload and run time, if it still has not started when written. A
 * debounced holder's new run time is capped by its window's end (a unique-key holder has none).
 */
export interface UniqueReplace {
  readonly id: string;
  /** JSON text. */
  readonly payload: string;
  /** An absolute instant, or null to use the store's clock plus `delayMs`. */
  readonly runAt: number | null;
  readonly delayMs: number;
  /**
   * For a debounce: the job to insert instead if the holder started between the look-up and the
   * rewrite, so the last payload still runs after it.
   */
  readonly fallback?: NewJob;
}

/** How a keyed job meets the holder of its key: its unique-key mode, or its window's kind. */
export type KeyMode = UniqueKeyMode | WindowKind;

/** Where a deduplicated job of the batch went. */
export interface UniqueMatch {
  /** The job that holds the key: stored, or inserted by this very batch. */
  readonly holderId: string;
  readonly mode: KeyMode;
  /** The job asked to rewrite the holder (a replace or a debounce), and the holder had not started. */
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

/** The lookup key of (window kind, wire name, window key): never equal to a unique key's. */
export function windowSlot(kind: WindowKind, name: string, key: string): string {
  return JSON.stringify([kind, name, key]);
}

/** The lookup key of the unique key or window a job carries, or null when it carries neither. */
export function slotOf(job: NewJob): string | null {
  if (job.uniqueKey != null) return uniqueSlot(job.name, job.uniqueKey);
  return job.window ? windowSlot(job.window.kind, job.name, job.window.key) : null;
}

/** True when a holder was never claimed, so `replace` may still rewrite it. */
export function notStarted(holder: { readonly state: JobState; readonly attempt: number }): boolean {
  return holder.attempt === 0 && (holder.state === 'scheduled' || holder.state === 'awaiting_parents');
}

/** True when a job of the batch carries a unique key or a debounce or throttle window. */
export function hasKeys(jobs: readonly NewJob[]): boolean {
  return jobs.some((job) => job.uniqueKey != null || job.window !== undefined);
}

/**
 * Decides, before anything is written, what a batch does with its unique keys and windows. The
 * batch acts as its enqueues would one after another: a job whose key is held, by a stored job
 * (`stored`, by {@link slotOf}) or by an earlier job of the batch, writes no job of its own. In
 * `replace` mode it hands the holder its payload and run time, if the holder has not started; a
 * debounce hands it its payload and pushes its run time (a debounce holder is one that has not
 * started, so the store's look-up returns no other); a throttle leaves the window's opener as it
 * is. A job of the batch that depends on a deduplicated job waits for the holder instead.
 *
 * `jobs` must not hold jobs whose id is already stored: those write nothing and claim no key.
 */
export function planUnique(jobs: readonly NewJob[], stored: ReadonlyMap<string, UniqueHolder>): UniquePlan {
  const insert: NewJob[] = [];
  const inBatch = new Map<string, number>();
  const replace = new Map<string, UniqueReplace>();
  const matched = new Map<string, UniqueMatch>();
  for (const job of jobs) {
    const slot = slotOf(job);
    if (slot === null) {
      insert.push(job);
      continue;
    }
    const mode: KeyMode = job.window?.kind ?? job.uniqueKeyMode ?? 'keep';
    const earlier = inBatch.get(slot);
    if (earlier !== undefined) {
      const holder = insert[earlier]!;
      if (mode === 'replace') insert[earlier] = { ...holder, payload: job.payload, runAt: job.runAt, delayMs: job.delayMs };
      // A debounce in the same batch shares the holder's instant: its own window from now, capped by the holder's end.
      if (mode === 'debounce') insert[earlier] = { ...holder, payload: job.payload, delayMs: Math.min(job.delayMs, holder.window!.endsInMs) };
      matched.set(job.id, { holderId: holder.id, mode, replace: mode === 'replace' || mode === 'debounce', inBatch: true });
      continue;
    }
    const holder = stored.get(slot);
    if (holder) {
      const rewrite = (mode === 'replace' && notStarted(holder)) || mode === 'debounce';
      if (rewrite) {
        replace.set(holder.id, { id: holder.id, payload: job.payload, runAt: job.runAt, delayMs: job.delayMs, ...(mode === 'debounce' ? { fallback: job } : {}) });
      }
      matched.set(job.id, { holderId: holder.id, mode, replace: rewrite, inBatch: false });
      continue;
    }
    inBatch.set(slot, insert.length);
    insert.push(job);
  }
  return { insert: matched.size === 0 ? insert : insert.map((job) => remapParents(job, matched)), replace: [...replace.values()], matched };
}

/** The debounced jobs to insert because their holder started before the rewrite reached it. */
export function debounceFallbacks(plan: UniquePlan, replaced: ReadonlySet<string>): NewJob[] {
  return plan.replace.flatMap((op) => (op.fallback && !replaced.has(op.id) ? [op.fallback] : []));
}

function remapParents(job: NewJob, matched: ReadonlyMap<string, UniqueMatch>): NewJob {
  if (!job.dependsOn?.some((parent) => matched.has(parent))) return job;
  return { ...job, dependsOn: [...new Set(job.dependsOn.map((parent) => matched.get(parent)?.holderId ?? parent))] };
}

/**
 * The result of each job of a batch. `created` holds the ids inserted (debounce fallbacks
 * included); `replaced` the stored holders whose rewrite applied (on PostgreSQL a holder can be
 * claimed between the look-up and the write: a unique-key holder is then kept as it is, and a
 * debounce inserts its fallback instead).
 */
export function enqueueResults(
  jobs: readonly NewJob[],
  created: ReadonlySet<string>,
  plan: UniquePlan | null,
  replaced: ReadonlySet<string> = new Set(),
): EnqueueResult[] {
  const fallbackOf = new Map(plan?.replace.flatMap((op) => (op.fallback ? [[op.id, op.fallback.id] as const] : [])) ?? []);
  return jobs.map((job) => {
    const match = plan?.matched.get(job.id);
    if (!match) return { id: job.id, created: created.has(job.id) };
    const applied = match.replace && (match.inBatch ? created.has(match.holderId) : replaced.has(match.holderId));
    const fallback = match.mode === 'debounce' && !match.inBatch && !applied ? fallbackOf.get(match.holderId) : undefined;
    if (fallback !== undefined) return fallback === job.id ? { id: job.id, created: created.has(job.id) } : { id: fallback, created: false, deduplicated: 'debounced' };
    return { id: match.holderId, created: false, deduplicated: deduplicated(match.mode, applied) };
  });
}

function deduplicated(mode: KeyMode, applied: boolean): Deduplicated {
  if (mode === 'debounce') return 'debounced';
  if (mode === 'throttle') return 'throttled';
  return applied ? 'replaced' : 'kept';
}

/**
 * Replay would make a debounced job take its key's enqueues again while another job that has not
 * started takes them: two jobs would share one debounce.
 */
export function debounceKeyTakenError(job: { readonly id: string; readonly name: string; readonly state: JobState }, key: string, holderId: string): IllegalTransitionError {
  return new IllegalTransitionError(
    job.id,
    'replay',
    job.state,
    `Job ${job.id} cannot be replayed while job ${holderId} takes the enqueues of its debounce key ${showValue(key)} for ${job.name}; replay it once that job has started, or cancel that job first.`,
  );
}

/** True when a replay of a job in `state` could be refused for its key (the states replay leaves). */
export function replayGuarded(state: JobState): boolean {
  return state === 'dead_lettered' || state === 'quarantined';
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
