import type { JobState } from '../../../core/index.js';
import type { HistoryEntry } from '../../job-store.js';

export interface SqliteHistoryRow {
  id: number;
  job_id: string;
  name: string;
  at: number;
  state: JobState;
  attempt: number;
  error: string | null;
  worker_id: string | null;
  lease_until: number | null;
}

/** A history row as an entry; a position is the entry's id. */
export const historyEntry = (row: SqliteHistoryRow): HistoryEntry => ({
  id: row.id,
  position: String(row.id),
  jobId: row.job_id,
  name: row.name,
  at: new Date(row.at),
  state: row.state,
  attempt: row.attempt,
  error: row.error,
  workerId: row.worker_id,
  leaseUntil: row.lease_until === null ? null : new Date(row.lease_until),
});
