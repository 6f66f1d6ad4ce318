import { isDeadLetterState, type JobState } from '../../core/index.js';
import { batchSummary, CALLBACK_ORDER, OPEN_STATES } from '../batch/batch-summary.js';
import type { BatchSummary } from '../job-store.types.js';
import type { JobRow } from '../job-row.js';

/** The in-memory store's batch reads: a scan of its jobs, which is what the memory store does for every read. */
export class MemoryBatches {
  constructor(private readonly jobs: () => Iterable<JobRow>) {}

  jobBatch({ batchId, failedLimit }: { readonly batchId: string; readonly failedLimit: number }): BatchSummary | null {
    const rows = this.of(batchId);
    if (rows.length === 0) return null;
    const counts = new Map<JobState, number>();
    const failed: string[] = [];
    for (const row of rows) {
      if (row.batchCallback !== null) continue;
      counts.set(row.state, (counts.get(row.state) ?? 0) + 1);
      if (isDeadLetterState(row.state)) failed.push(row.id);
    }
    return batchSummary(batchId, {
      counts,
      failedJobIds: failed.sort().slice(0, failedLimit),
      callbacks: rows.filter((row) => row.batchCallback !== null).map((row) => ({ kind: row.batchCallback!, jobId: row.id, state: row.state })),
      createdAt: new Date(Math.min(...rows.map((row) => row.createdAt))),
    });
  }

  jobBatchIds({ limit, before }: { readonly limit: number; readonly before: string | null }): string[] {
    const ids = new Set<string>();
    for (const row of this.jobs()) if (row.batchId !== null && (before === null || row.batchId < before)) ids.add(row.batchId);
    return [...ids].sort().reverse().slice(0, limit);
  }

  jobBatchOpen({ batchId, limit }: { readonly batchId: string; readonly limit: number }): string[] {
    const rank = (row: JobRow) => (row.batchCallback === null ? CALLBACK_ORDER.length : 0);
    return this.of(batchId)
      .filter((row) => OPEN_STATES.includes(row.state))
      .sort((a, b) => rank(a) - rank(b) || (a.id < b.id ? -1 : 1))
      .slice(0, limit)
      .map((row) => row.id);
  }

  private of(batchId: string): JobRow[] {
    return [...this.jobs()].filter((row) => row.batchId === batchId);
  }
}
