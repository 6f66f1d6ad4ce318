import type { BatchCallbackKind, DependencyMode, JobState } from '../../core/index.js';
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
  /** Never 'on_failure': an on_failure job is stored 'on_any_terminal' with fails_only = 1 (migration 0023). */
  dependency_mode: Exclude<DependencyMode, 'on_failure'> | null;
  fails_only: number;
  concurrency_key: string | null;
  group_key: string | null;
  unique_key: string | null;
  window_kind: 'debounce' | 'throttle' | null;
  window_key: string | null;
  window_ends_at: number | null;
  sequence_key: string | null;
  sequence_mode: 'block' | 'continue' | null;
  batch_id: string | null;
  batch_callback: BatchCallbackKind | null;
  parent_failed: number;
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

/**
 * The dependency mode as stored: SQLite cannot widen dependency_mode's CHECK, so an `on_failure`
 * job is stored as `on_any_terminal` (how it settles until its latch ends) with `fails_only` set
 * (migration 0023). {@link fromSqliteRow} and {@link SQLITE_MODE_OF} read the pair back.
 */
export function storedDependencyMode(mode: DependencyMode | null | undefined): { dependency_mode: Exclude<DependencyMode, 'on_failure'> | null; fails_only: 0 | 1 } {
  return mode === 'on_failure' ? { dependency_mode: 'on_any_terminal', fails_only: 1 } : { dependency_mode: mode ?? null, fails_only: 0 };
}

/** The job's dependency mode as a SQL expression over the row `alias` (see {@link storedDependencyMode}). */
export const SQLITE_MODE_OF = (alias: string) => `CASE WHEN ${alias}.fails_only = 1 THEN 'on_failure' ELSE ${alias}.dependency_mode END`;

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
    dependencyMode: row.fails_only === 1 ? 'on_failure' : row.dependency_mode,
    concurrencyKey: row.concurrency_key,
    groupKey: row.group_key,
    uniqueKey: row.unique_key,
    windowKind: row.window_kind,
    windowKey: row.window_key,
    windowEndsAt: row.window_ends_at,
    sequenceKey: row.sequence_key,
    sequenceMode: row.sequence_mode,
    batchId: row.batch_id,
    batchCallback: row.batch_callback,
    parentFailed: row.parent_failed === 1,
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
