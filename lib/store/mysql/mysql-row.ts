import type { BatchCallbackKind, DependencyMode, JobState } from '../../core/index.js';
import type { JobRow } from '../job-row.js';
import { fromMysqlInstant, toMysqlInstant } from './mysql-instant.js';

/** A jobs row as the adapter's typeCast returns it (mysql-executor.ts): instants as UTC text. */
export interface MysqlJobRow {
  seq: number;
  id: string;
  name: string;
  queue: string;
  payload: string;
  state: JobState;
  run_at: string;
  scheduled_for: string;
  priority: number;
  schedule_id: string | null;
  pending_parents: number;
  dependency_mode: DependencyMode | null;
  concurrency_key: string | null;
  group_key: string | null;
  unique_key: string | null;
  window_kind: 'debounce' | 'throttle' | null;
  window_key: string | null;
  window_ends_at: string | null;
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
  leased_until: string | null;
  cancel_requested: number;
  last_error: string | null;
  output: string | null;
  progress: string | null;
  created_at: string;
  updated_at: string;
  finished_at: string | null;
  parked_key?: string | null;
}

/** Every stored column of a job, for `SELECT ${JOB_COLUMNS} FROM jobs j` (aliased `j`). */
export const JOB_COLUMNS = [
  'seq', 'id', 'name', 'queue', 'payload', 'state', 'run_at', 'scheduled_for', 'priority', 'schedule_id', 'pending_parents',
  'dependency_mode', 'concurrency_key', 'group_key', 'unique_key', 'window_kind', 'window_key', 'window_ends_at', 'sequence_key', 'sequence_mode', 'batch_id', 'batch_callback', 'parent_failed', 'retry', 'traceparent', 'tracestate', 'attempt', 'max_attempts', 'snoozes', 'worker_id',
  'leased_until', 'cancel_requested', 'last_error', 'output', 'progress', 'created_at', 'updated_at', 'finished_at', 'parked_key',
]
  .map((column) => `j.${column}`)
  .join(', ');

const ms = (text: string): number => fromMysqlInstant(text).getTime();
const msOrNull = (text: string | null): number | null => (text === null ? null : ms(text));

export function fromMysqlRow(row: MysqlJobRow): JobRow {
  return {
    id: row.id,
    seq: Number(row.seq),
    name: row.name,
    queue: row.queue,
    payload: row.payload,
    state: row.state,
    runAt: ms(row.run_at),
    scheduledFor: ms(row.scheduled_for),
    priority: row.priority,
    scheduleId: row.schedule_id,
    pendingParents: row.pending_parents,
    dependencyMode: row.dependency_mode,
    concurrencyKey: row.concurrency_key,
    groupKey: row.group_key,
    uniqueKey: row.unique_key,
    windowKind: row.window_kind,
    windowKey: row.window_key,
    windowEndsAt: msOrNull(row.window_ends_at),
    sequenceKey: row.sequence_key,
    sequenceMode: row.sequence_mode,
    batchId: row.batch_id,
    batchCallback: row.batch_callback,
    parentFailed: Number(row.parent_failed) === 1,
    retry: row.retry,
    traceparent: row.traceparent,
    tracestate: row.tracestate,
    attempt: row.attempt,
    maxAttempts: row.max_attempts,
    snoozes: row.snoozes,
    workerId: row.worker_id,
    leasedUntil: msOrNull(row.leased_until),
    cancelRequested: Number(row.cancel_requested) === 1,
    lastError: row.last_error,
    output: row.output,
    progress: row.progress,
    createdAt: ms(row.created_at),
    updatedAt: ms(row.updated_at),
    finishedAt: msOrNull(row.finished_at),
  };
}

/** An instant for a DATETIME(3) parameter; null stays null. */
export function instantParam(value: number | null): string | null {
  return value === null ? null : toMysqlInstant(value);
}
