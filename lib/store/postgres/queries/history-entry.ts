import type { JobState } from '../../../core/index.js';
import type { HistoryEntry } from '../../job-store.js';

/** The columns a history read selects; a position is the entry's `tx:id`. */
export const HISTORY_COLUMNS = 'id, tx::text AS tx, job_id, name, at, state, attempt, error, worker_id, lease_until';

export interface PgHistoryRow {
  id: string;
  tx: string;
  job_id: string;
  name: string;
  at: Date;
  state: JobState;
  attempt: number;
  error: string | null;
  worker_id: string | null;
  lease_until: Date | null;
}

export const historyEntry = (row: PgHistoryRow): HistoryEntry => ({
  id: Number(row.id),
  position: `${row.tx}:${row.id}`,
  jobId: row.job_id,
  name: row.name,
  at: row.at,
  state: row.state,
  attempt: row.attempt,
  error: row.error,
  workerId: row.worker_id,
  leaseUntil: row.lease_until,
});
