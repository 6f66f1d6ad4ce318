import type { JobState } from '../../../core/index.js';
import type { LeaseRef, OutcomeResult } from '../../job-store.js';

/** Pairs each report with the row it changed; a report that changed none was stale. */
export function outcomeResults(reports: readonly LeaseRef[], applied: readonly { id: string; state: string }[]): OutcomeResult[] {
  const states = new Map(applied.map((row) => [row.id, row.state as JobState]));
  return reports.map(({ jobId, attempt }) => {
    const state = states.get(jobId);
    return state === undefined ? { jobId, attempt, status: 'stale' } : { jobId, attempt, status: 'applied', state };
  });
}
