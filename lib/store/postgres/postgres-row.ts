import type { DependencyMode, JobState } from '../../core/index.js';
import type { JobRow } from '../job-row.js';

/** The column list every query that returns whole jobs selects, with JSON as text. */
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
    'schedule_id',
    'pending_parents',
    'dependency_mode',
    'concurrency_key',
    'attempt',
    'max_attempts',
    'worker_id',
    'leased_until',
    'cancel_requested',
    'last_error',
    'output::text AS output',
    'created_at',
    'updated_at',
    'finished_at',
  ]
    .map((column) => `${alias}.${column}`)
    .join(', ');
}

export interface PgJobRow {
  id: string;
  seq: string;
  name: string;
  queue: string;
  payload: string;
  state: JobState;
  run_at: Date;
  scheduled_for: Date;
  schedule_id: string | null;
  pending_parents: number;
  dependency_mode: DependencyMode | null;
  concurrency_key: string | null;
  attempt: number;
  max_attempts: number;
  worker_id: string | null;
  leased_until: Date | null;
  cancel_requested: boolean;
  last_error: string | null;
  output: string | null;
  created_at: Date;
  updated_at: Date;
  finished_at: Date | null;
}

export function fromPgRow(row: PgJobRow): JobRow {
  return {
    id: row.id,
    seq: Number(row.seq),
    name: row.name,
    queue: row.queue,
    payload: row.payload,
    state: row.state,
    runAt: row.run_at.getTime(),
    scheduledFor: row.scheduled_for.getTime(),
    scheduleId: row.schedule_id,
    pendingParents: row.pending_parents,
    dependencyMode: row.dependency_mode,
    concurrencyKey: row.concurrency_key,
    attempt: row.attempt,
    maxAttempts: row.max_attempts,
    workerId: row.worker_id,
    leasedUntil: row.leased_until?.getTime() ?? null,
    cancelRequested: row.cancel_requested,
    lastError: row.last_error,
    output: row.output,
    createdAt: row.created_at.getTime(),
    updatedAt: row.updated_at.getTime(),
    finishedAt: row.finished_at?.getTime() ?? null,
  };
}

/** The lifecycle fields as SQL parameters, in the order {@link writeLifecycleSql} expects from `$2`. */
export function lifecycleValues(row: JobRow): unknown[] {
  return [
    row.state,
    new Date(row.runAt),
    row.attempt,
    row.workerId,
    row.leasedUntil === null ? null : new Date(row.leasedUntil),
    row.cancelRequested,
    row.lastError,
    row.output,
    row.finishedAt === null ? null : new Date(row.finishedAt),
    new Date(row.updatedAt),
  ];
}
