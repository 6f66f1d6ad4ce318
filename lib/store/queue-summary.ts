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
 * or has been paused (and perhaps resumed) since.
 */
export function queueSummaries(rows: readonly QueueCountRow[]): QueueSummary[] {
  const byName = new Map<string, { name: string; paused: boolean; counts: Partial<Record<JobState, number>> }>();
  for (const row of rows) {
    const entry = byName.get(row.name) ?? { name: row.name, paused: false, counts: {} };
    if (row.paused) entry.paused = true;
    if (row.state !== null && row.count) entry.counts[row.state] = (entry.counts[row.state] ?? 0) + Number(row.count);
    byName.set(row.name, entry);
  }
  return [...byName.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}
