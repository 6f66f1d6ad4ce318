import type { DependencyMode, JobState } from '../../core/index.js';
import type { JobRow } from '../job-row.js';

export interface SqliteJobRow {
  seq: number;
  /** The limit key that held the job back, while it is parked (claim-lanes.query.ts). */
  parked_key?: string | null;
  id: string;
  name: string;
  queue: string;
  payload: string;
  state: JobState;
  run_at: number;
  scheduled_for: number;
  priority: number;
  schedule_id: string | null;
  pending_parents: number;
  dependency_mode: DependencyMode | null;
  concurrency_key: string | null;
  unique_key: string | null;
  window_kind: 'debounce' | 'throttle' | null;
  window_key: string | null;
  window_ends_at: number | null;
  sequence_key: string | null;
  sequence_mode: 'block' | 'continue' | null;
  retry: string | null;
  traceparent: string | null;
  tracestate: string | null;
  attempt: number;
  max_attempts: number;
  snoozes: number;
  worker_id: string | null;
  leased_until: number | null;
  cancel_requested: number;
  last_error: string | null;
  output: string | null;
  progress: string | null;
  created_at: number;
  updated_at: number;
  finished_at: number | null;
}

export function fromSqliteRow(row: SqliteJobRow): JobRow {
  return {
    id: row.id,
    seq: row.seq,
    name: row.name,
    queue: row.queue,
    payload: row.payload,
    state: row.state,
    runAt: row.run_at,
    scheduledFor: row.scheduled_for,
    priority: row.priority,
    scheduleId: row.schedule_id,
    pendingParents: row.pending_parents,
    dependencyMode: row.dependency_mode,
    concurrencyKey: row.concurrency_key,
    uniqueKey: row.unique_key,
    windowKind: row.window_kind,
    windowKey: row.window_key,
    windowEndsAt: row.window_ends_at,
    sequenceKey: row.sequence_key,
    sequenceMode: row.sequence_mode,
    retry: row.retry,
    traceparent: row.traceparent,
    tracestate: row.tracestate,
    attempt: row.attempt,
    maxAttempts: row.max_attempts,
    snoozes: row.snoozes,
    workerId: row.worker_id,
    leasedUntil: row.leased_until,
    cancelRequested: row.cancel_requested === 1,
    lastError: row.last_error,
    output: row.output,
    progress: row.progress,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    finishedAt: row.finished_at,
  };
}

/** The lifecycle fields as named parameters for an UPDATE. */
export function lifecycleParams(row: JobRow) {
  return {
    id: row.id,
    state: row.state,
    run_at: row.runAt,
    attempt: row.attempt,
    max_attempts: row.maxAttempts,
    snoozes: row.snoozes,
    worker_id: row.workerId,
    leased_until: row.leasedUntil,
    cancel_requested: row.cancelRequested ? 1 : 0,
    last_error: row.lastError,
    output: row.output,
    finished_at: row.finishedAt,
    updated_at: row.updatedAt,
  };
}
