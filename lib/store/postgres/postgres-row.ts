import type { BatchCallbackKind, DependencyMode, JobState } from '../../core/index.js';
import type { JobRow } from '../job-row.js';
import { pgInstant } from './pg-instant.js';

/** The job's instants, each sent as epoch milliseconds. */
const INSTANTS = new Set(['run_at', 'scheduled_for', 'leased_until', 'created_at', 'updated_at', 'finished_at', 'window_ends_at']);

/**
 * The column list every query that returns whole jobs selects, with JSON as text and instants as
 * epoch milliseconds (float8). node-postgres parses a timestamptz's text into a Date with a regular
 * expression, six times per job, a visible share of a draining worker's CPU; a float is one
 * parseFloat.
 */
export function jobColumns(alias = 'j'): string {
  return [
    'id',
    'seq',
    'name',
    'queue',
    'payload::text AS payload',
    'state',
    'run_at',
    'scheduled_for',
    'priority',
    'schedule_id',
    'pending_parents',
    'dependency_mode',
    'concurrency_key',
    'group_key',
    'unique_key',
    'window_kind',
    'window_key',
    'window_ends_at',
    'sequence_key',
    'sequence_mode',
    'batch_id',
    'batch_callback',
    'retry::text AS retry',
    'traceparent',
    'tracestate',
    'attempt',
    'max_attempts',
    'snoozes',
    'worker_id',
    'leased_until',
    'cancel_requested',
    'last_error',
    'output::text AS output',
    'progress::text AS progress',
    'created_at',
    'updated_at',
    'finished_at',
  ]
    .map((column) => (INSTANTS.has(column) ? `date_part('epoch', ${alias}.${column}) * 1000 AS ${column}` : `${alias}.${column}`))
    .join(', ');
}

/**
 * Whole milliseconds from a float of epoch milliseconds, truncated as a Date truncates. The float
 * carries microseconds with an error far below a thousandth of a millisecond, so a value a hair
 * under a whole millisecond is nudged up before it is truncated.
 */
export function millis(value: number): number {
  return Math.floor(value + 0.0005);
}

export interface PgJobRow {
  id: string;
  seq: string;
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
  group_key: string | null;
  unique_key: string | null;
  window_kind: 'debounce' | 'throttle' | null;
  window_key: string | null;
  window_ends_at: number | null;
  sequence_key: string | null;
  sequence_mode: 'block' | 'continue' | null;
  batch_id: string | null;
  batch_callback: BatchCallbackKind | null;
  /** Not read back: the settle function alone decides with it, inside the database. */
  parent_failed?: boolean;
  retry: string | null;
  traceparent: string | null;
  tracestate: string | null;
  attempt: number;
  max_attempts: number;
  snoozes: number;
  worker_id: string | null;
  leased_until: number | null;
  cancel_requested: boolean;
  last_error: string | null;
  output: string | null;
  progress: string | null;
  created_at: number;
  updated_at: number;
  finished_at: number | null;
}

export function fromPgRow(row: PgJobRow): JobRow {
  return {
    id: row.id,
    seq: Number(row.seq),
    name: row.name,
    queue: row.queue,
    payload: row.payload,
    state: row.state,
    runAt: millis(row.run_at),
    scheduledFor: millis(row.scheduled_for),
    priority: row.priority,
    scheduleId: row.schedule_id,
    pendingParents: row.pending_parents,
    dependencyMode: row.dependency_mode,
    concurrencyKey: row.concurrency_key,
    groupKey: row.group_key,
    uniqueKey: row.unique_key,
    windowKind: row.window_kind,
    windowKey: row.window_key,
    windowEndsAt: row.window_ends_at === null ? null : millis(row.window_ends_at),
    sequenceKey: row.sequence_key,
    sequenceMode: row.sequence_mode,
    batchId: row.batch_id,
    batchCallback: row.batch_callback,
    parentFailed: row.parent_failed ?? false,
    retry: row.retry,
    traceparent: row.traceparent,
    tracestate: row.tracestate,
    attempt: row.attempt,
    maxAttempts: row.max_attempts,
    snoozes: row.snoozes,
    workerId: row.worker_id,
    leasedUntil: row.leased_until === null ? null : millis(row.leased_until),
    cancelRequested: row.cancel_requested,
    lastError: row.last_error,
    output: row.output,
    progress: row.progress,
    createdAt: millis(row.created_at),
    updatedAt: millis(row.updated_at),
    finishedAt: row.finished_at === null ? null : millis(row.finished_at),
  };
}

/** The lifecycle fields as SQL parameters, in the order {@link writeLifecycleSql} expects from `$2`. */
export function lifecycleValues(row: JobRow): unknown[] {
  return [
    row.state,
    pgInstant(row.runAt),
    row.attempt,
    row.workerId,
    row.leasedUntil === null ? null : pgInstant(row.leasedUntil),
    row.cancelRequested,
    row.lastError,
    row.output,
    row.finishedAt === null ? null : pgInstant(row.finishedAt),
    pgInstant(row.updatedAt),
    row.maxAttempts,
    row.snoozes,
  ];
}
