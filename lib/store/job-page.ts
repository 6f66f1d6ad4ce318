import type { JobState } from '../core/index.js';

/**
 * The most jobs one page of a job listing examines. The jobs are read in enqueue order, newest or
 * oldest first (of one state, or of all states merged); the other filters are applied to the jobs read, so a page
 * that asks for a rare queue stops here with fewer jobs than asked for, and its `next` says where
 * to go on. Reading them costs about a heap page each; 10,000 keeps a page in the tens of
 * milliseconds on PostgreSQL whatever the table holds.
 */
export const LIST_SCAN_LIMIT = 10_000;

/**
 * A job listing as a driver receives it: checked, `limit` and `order` filled in, `cursor` (the
 * contract's `before` or `after`, whichever the order pages with) a canonical UUID when given,
 * `idPrefix` canonical (see canonicalIdPrefix), the enqueue-time bounds in epoch milliseconds.
 */
export interface DriverListParams {
  readonly state?: JobState;
  readonly queue?: string;
  readonly name?: string;
  readonly idPrefix?: string;
  /** Inclusive. */
  readonly enqueuedAfter?: number;
  /** Exclusive. */
  readonly enqueuedBefore?: number;
  readonly order: 'newest' | 'oldest';
  readonly limit: number;
  readonly cursor?: string;
}

/** One job the listing examined: its row, its id, its place in the scan (1 for the newest) and whether the filters match it. */
export interface ScannedJob<R> {
  readonly row: R;
  readonly id: string;
  readonly position: number;
  readonly matches: boolean;
}

/**
 * Cuts one page from a listing's scan, given in the listing's order: the first `limit` jobs that
 * match. `next` (the cursor of the following page) is the last of them when another match follows
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

/** Whether a job passes a listing's filters other than its state (an absent filter passes everything). */
export function matchesFilters(
  job: { readonly id: string; readonly queue: string; readonly name: string; readonly createdAt: number },
  params: DriverListParams,
): boolean {
  return (
    (params.queue === undefined || job.queue === params.queue) &&
    (params.name === undefined || job.name === params.name) &&
    (params.idPrefix === undefined || job.id.startsWith(params.idPrefix)) &&
    (params.enqueuedAfter === undefined || job.createdAt >= params.enqueuedAfter) &&
    (params.enqueuedBefore === undefined || job.createdAt < params.enqueuedBefore)
  );
}
