import type { JobState } from '../core/index.js';

/**
 * The most jobs one page of a job listing examines. The jobs are read newest first (of one state,
 * or of all states merged); the queue and name filters are applied to the jobs read, so a page
 * that asks for a rare queue stops here with fewer jobs than asked for, and its `next` says where
 * to go on. Reading them costs about a heap page each; 10,000 keeps a page in the tens of
 * milliseconds on PostgreSQL whatever the table holds.
 */
export const LIST_SCAN_LIMIT = 10_000;

/** A job listing as a driver receives it: checked, `limit` filled in, `before` a canonical UUID when given. */
export interface DriverListParams {
  readonly state?: JobState;
  readonly queue?: string;
  readonly name?: string;
  readonly limit: number;
  readonly before?: string;
}

/** One job the listing examined: its row, its id, its place in the scan (1 for the newest) and whether the filters match it. */
export interface ScannedJob<R> {
  readonly row: R;
  readonly id: string;
  readonly position: number;
  readonly matches: boolean;
}

/**
 * Cuts one page from a listing's scan, given newest first: the first `limit` jobs that match.
 * `next` (the `before` of the following page) is the last of them when another match follows
 * within the scan; the last job examined when the scan stopped at `scan` jobs, so the next page
 * starts where this one stopped looking; null when the scan ran out of jobs. Every store cuts its
 * pages here, so they agree on where each page ends.
 */
export function cutPage<R>(scanned: Iterable<ScannedJob<R>>, limit: number, scan: number = LIST_SCAN_LIMIT): { rows: R[]; next: string | null } {
  const rows: R[] = [];
  let lastMatch: string | null = null;
  for (const job of scanned) {
    if (job.matches) {
      if (rows.length === limit) return { rows, next: lastMatch };
      rows.push(job.row);
      lastMatch = job.id;
    }
    if (job.position >= scan) return { rows, next: job.id };
  }
  return { rows, next: null };
}

/** Whether a job passes a listing's queue and name filters (an absent filter passes everything). */
export function matchesFilters(job: { readonly queue: string; readonly name: string }, params: DriverListParams): boolean {
  return (params.queue === undefined || job.queue === params.queue) && (params.name === undefined || job.name === params.name);
}
