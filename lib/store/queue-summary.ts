import type { JobState } from '../core/index.js';
import type { QueueSummary } from './job-store.types.js';

export type { QueueSummary } from './job-store.types.js';

/** One row of a queue listing: a queue's count in one state, or (state null) a queue with no jobs. */
export interface QueueCountRow {
  readonly name: string;
  readonly paused: boolean | number | null;
  readonly state: JobState | null;
  /** A number, or the text of a bigint (PostgreSQL). */
  readonly count: number | string | null;
}

/**
 * Folds the rows an adapter read into summaries, sorted by name: every queue that has a stored job
 * or has been paused (and perhaps resumed) since. With `keepOrder`, in the order the rows name
 * them: a page read in the database's own text order, whose cursor is its last name in that order.
 */
export function queueSummaries(rows: readonly QueueCountRow[], { keepOrder = false } = {}): QueueSummary[] {
  const byName = new Map<string, { name: string; paused: boolean; counts: Partial<Record<JobState, number>> }>();
  for (const row of rows) {
    const entry = byName.get(row.name) ?? { name: row.name, paused: false, counts: {} };
    if (row.paused) entry.paused = true;
    if (row.state !== null && row.count) entry.counts[row.state] = (entry.counts[row.state] ?? 0) + Number(row.count);
    byName.set(row.name, entry);
  }
  const summaries = [...byName.values()];
  return keepOrder ? summaries : summaries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}
