import type { NewJob } from '../enqueue-input.js';
import type { JobRow } from '../job-row.js';
import { takesDebounce } from '../../core/index.js';
import { debounceKeyTakenError, replayGuarded, slotOf, UNIQUE_HOLDER_STATES, uniqueKeyTakenError, uniqueSlot, windowSlot, type UniqueHolder } from '../unique/unique-plan.js';

/**
 * The stored holders of the keys and windows `jobs` carry, by slotOf, in one pass over the rows: a
 * unique key's unfinished job, a debounce's job that has not started, a throttle's job whose window
 * is open at `now`.
 */
export function memoryHolders(rows: Iterable<JobRow>, jobs: readonly NewJob[], now: number): Map<string, UniqueHolder> {
  const wanted = new Set(jobs.flatMap((job) => slotOf(job) ?? []));
  const found = new Map<string, UniqueHolder>();
  for (const row of rows) {
    const slot = holdsSlot(row, now);
    if (slot !== null && wanted.has(slot)) found.set(slot, { id: row.id, state: row.state, attempt: row.attempt });
  }
  return found;
}

function holdsSlot(row: JobRow, now: number): string | null {
  if (row.uniqueKey !== null) return UNIQUE_HOLDER_STATES.includes(row.state) ? uniqueSlot(row.name, row.uniqueKey) : null;
  if (row.windowKind === 'debounce') return takesDebounce(row.windowKind, row.state, row.attempt) ? windowSlot('debounce', row.name, row.windowKey!) : null;
  if (row.windowKind === 'throttle') return row.windowEndsAt! > now ? windowSlot('throttle', row.name, row.windowKey!) : null;
  return null;
}

/**
 * Refuses a replay that would give a job back a unique key another unfinished job holds, or make a
 * debounced job take its key's enqueues while another job that has not started takes them.
 */
export function guardReplayMemory(job: JobRow | undefined, rows: Iterable<JobRow>): void {
  if (!job || !replayGuarded(job.state)) return;
  for (const row of rows) {
    if (row.id === job.id || row.name !== job.name) continue;
    if (job.uniqueKey !== null && row.uniqueKey === job.uniqueKey && UNIQUE_HOLDER_STATES.includes(row.state)) throw uniqueKeyTakenError(job, job.uniqueKey, row.id);
    if (job.windowKind === 'debounce' && row.windowKey === job.windowKey && takesDebounce(row.windowKind, row.state, row.attempt)) {
      throw debounceKeyTakenError(job, job.windowKey!, row.id);
    }
  }
}
