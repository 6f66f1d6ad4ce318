import type { JobState } from '../core/index.js';

/** A queue as an operator sees it: whether it is paused, and its stored jobs per state. */
export interface QueueSummary {
  readonly name: string;
  /** Claims skip a paused queue; its jobs keep their places. */
  readonly paused: boolean;
  /** Stored jobs of the queue per state; a state with none is absent. */
  readonly counts: Readonly<Partial<Record<JobState, number>>>;
}

/** One row of a queue listing: a queue's count in one state, or (state null) a queue with no jobs. */
export interface QueueCountRow {
  readonly name: string;
  readonly paused: boolean | number | null;
  readonly state: JobState | null;
  readonly count: number | null;
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
