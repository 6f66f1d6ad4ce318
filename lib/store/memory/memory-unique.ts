import type { NewJob } from '../enqueue-input.js';
import type { JobRow } from '../job-row.js';
import { UNIQUE_HOLDER_STATES, uniqueKeyTakenError, uniqueSlot, type UniqueHolder } from '../unique/unique-plan.js';

/** The stored holders of the keys `jobs` carry, by uniqueSlot: one pass over the rows. */
export function memoryHolders(rows: Iterable<JobRow>, jobs: readonly NewJob[]): Map<string, UniqueHolder> {
  const wanted = new Set(jobs.flatMap((job) => (job.uniqueKey == null ? [] : [uniqueSlot(job.name, job.uniqueKey)])));
  const found = new Map<string, UniqueHolder>();
  for (const row of rows) {
    if (row.uniqueKey === null || !UNIQUE_HOLDER_STATES.includes(row.state)) continue;
    const slot = uniqueSlot(row.name, row.uniqueKey);
    if (wanted.has(slot)) found.set(slot, { id: row.id, state: row.state, attempt: row.attempt });
  }
  return found;
}

/** Refuses a replay that would give a job back a key another unfinished job holds. */
export function guardReplayMemory(job: JobRow | undefined, rows: Iterable<JobRow>): void {
  if (!job || job.uniqueKey === null || (job.state !== 'dead_lettered' && job.state !== 'quarantined')) return;
  for (const row of rows) {
    if (row.id !== job.id && row.name === job.name && row.uniqueKey === job.uniqueKey && UNIQUE_HOLDER_STATES.includes(row.state)) {
      throw uniqueKeyTakenError(job, job.uniqueKey, row.id);
    }
  }
}
