import type { JobState } from '../../core/index.js';
import type { NewJob } from '../enqueue-input.js';
import type { EnqueueResult } from '../job-store.types.js';
import { chainSequences, sequenceKeys } from './sequence-chain.js';

/** What a SQL store gives {@link enqueueSequenced}; every call runs in the enqueue's transaction. */
/** A stored job's state and place in its sequence. */
export interface StoredPlace {
  readonly state: JobState;
  /** Its sequence edge is open: its turn has not come (it may have ended, cancelled, all the same). */
  readonly inLine: boolean;
}

export interface SequenceSteps<Db> {
  /** Locks each key's row (creating it when new), in key order, and returns its tail. */
  lock(db: Db, keys: readonly string[]): Promise<Map<string, string | null>>;
  /** Those of `ids` that exist: each one's state, and whether it is still in line (its sequence edge is open). */
  states(db: Db, ids: readonly string[]): Promise<Map<string, StoredPlace>>;
  /**
   * Enqueues the chained batch; `known` holds the states just read of the tails it waits for, and
   * `inLine` those of them still in line.
   */
  enqueue(db: Db, jobs: readonly NewJob[], known: ReadonlyMap<string, JobState>, inLine: ReadonlySet<string>): Promise<EnqueueResult[]>;
  /** Records each key's new tail. */
  move(db: Db, tails: ReadonlyMap<string, string>): Promise<void>;
}

/**
 * Enqueues a batch some of whose jobs join sequences, inside one transaction: lock the keys, read
 * their tails and which of the batch's caller-chosen ids are stored already, append each new job to
 * its sequence (docs/sequences.md), write, and move the tails. A tail that no longer exists
 * (retention deleted it) leaves nothing to wait for. The key locks are held until the transaction
 * ends, so a concurrent enqueue of a key appends behind this one, or, when this one rolls back,
 * behind the tail it found.
 */
export async function enqueueSequenced<Db>(db: Db, jobs: readonly NewJob[], steps: SequenceSteps<Db>): Promise<EnqueueResult[]> {
  const tails = await steps.lock(db, sequenceKeys(jobs));
  const ids = new Set<string>();
  for (const tail of tails.values()) if (tail !== null) ids.add(tail);
  for (const job of jobs) if (job.freshId !== true) ids.add(job.id);
  const states = ids.size > 0 ? await steps.states(db, [...ids]) : new Map<string, StoredPlace>();
  const live = new Map([...tails].map(([key, tail]) => [key, tail !== null && states.has(tail) ? tail : null]));
  const existing = new Set(jobs.filter((job) => job.freshId !== true && states.has(job.id)).map((job) => job.id));
  const chained = chainSequences(jobs, live, existing);
  const known = new Map<string, JobState>();
  const inLine = new Set<string>();
  for (const tail of live.values()) {
    if (tail === null) continue;
    known.set(tail, states.get(tail)!.state);
    if (states.get(tail)!.inLine) inLine.add(tail);
  }
  const results = await steps.enqueue(db, chained.jobs, known, inLine);
  await steps.move(db, chained.tails);
  return results;
}
