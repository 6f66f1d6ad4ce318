import { JOB_STATES, type JobState } from '../core/index.js';
import type { QueueSummary } from '../store/index.js';
import { table } from './output.js';

/** Queues as a table: name, pause state, and jobs per state; shared by `queues list` and `stats`. */
export function queueTable(queues: readonly QueueSummary[]): string {
  return table(
    ['QUEUE', 'PAUSED', ...JOB_STATES.map((s) => s.toUpperCase())],
    queues.map((q) => [q.name, q.paused ? 'yes' : 'no', ...JOB_STATES.map((state: JobState) => String(q.counts[state] ?? 0))]),
  );
}
