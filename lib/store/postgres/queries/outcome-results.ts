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

/**
 * An outcome write's results, and whether it ended a job that dependants wait on. The store asks
 * only when it polls alone (a transaction pooler and no listenUrl): no NOTIFY then tells its own
 * workers of the dependants the write released, so a hint from the store does
 * (postgres-driver-base.ts). Otherwise `releasing` is false.
 */
export interface AppliedOutcomes {
  readonly results: OutcomeResult[];
  readonly releasing: boolean;
}
