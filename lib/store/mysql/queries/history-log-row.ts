import type { JobState } from '../../../core/index.js';
import type { HistoryEntry } from '../../job-store.types.js';
import { fromMysqlInstant } from '../mysql-instant.js';

/** The columns a read of the log selects, from the history aliased `h`. */
export const HISTORY_LOG_COLUMNS = 'h.id, h.pos, h.job_id, h.name, h.at, h.state, h.attempt, h.error, h.worker_id, h.lease_until';

/** A numbered history row as the adapter's typeCast returns it. */
export interface MysqlHistoryLogRow {
  id: number;
  pos: number;
  job_id: string;
  name: string;
  at: string;
  state: JobState;
  attempt: number;
  error: string | null;
  worker_id: string | null;
  lease_until: string | null;
}

/** A numbered history row as an entry: its position is its `pos` (mysql-history-sequencer.ts). */
export const historyLogEntry = (row: MysqlHistoryLogRow): HistoryEntry => ({
  id: Number(row.id),
  position: String(row.pos),
  jobId: row.job_id,
  name: row.name,
  at: fromMysqlInstant(row.at),
  state: row.state,
  attempt: row.attempt,
  error: row.error,
  workerId: row.worker_id,
  leaseUntil: row.lease_until === null ? null : fromMysqlInstant(row.lease_until),
});
