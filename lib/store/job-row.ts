import { OccurrenceId, storedTraceContext, type BatchCallbackKind, type DependencyMode, type JobRecord, type JobState, type LifecycleFields, type RetryPolicy } from '../core/index.js';
import type { JobStatus } from './job-store.types.js';

/** A job as an adapter keeps it: lifecycle fields plus identity, with instants in epoch ms. */
export interface JobRow extends LifecycleFields {
  readonly id: string;
  /** Enqueue order; ties on `runAt` are claimed in this order. */
  readonly seq: number;
  readonly name: string;
  readonly queue: string;
  /** JSON text. */
  readonly payload: string;
  readonly scheduledFor: number;
  /** Lower first. */
  readonly priority: number;
  readonly scheduleId: string | null;
  readonly pendingParents: number;
  readonly dependencyMode: DependencyMode | null;
  readonly concurrencyKey: string | null;
  /** The fair group the job takes turns in (docs/groups.md), or null. */
  readonly groupKey: string | null;
  readonly uniqueKey: string | null;
  /** The window the job opened at enqueue: its kind, key and end (epoch ms), all null when none. */
  readonly windowKind: 'debounce' | 'throttle' | null;
  readonly windowKey: string | null;
  readonly windowEndsAt: number | null;
  /** The sequence the job joined at enqueue, and what it does after a failed predecessor; both null when none. */
  readonly sequenceKey: string | null;
  readonly sequenceMode: 'block' | 'continue' | null;
  /** The batch the job is part of or a callback of, and which callback; both null when none. */
  readonly batchId: string | null;
  readonly batchCallback: BatchCallbackKind | null;
  /** An `on_failure` job's memory that a parent ended without succeeding; false for every other job. */
  readonly parentFailed: boolean;
  /** The retry override set at enqueue, as JSON text; null when none was set. */
  readonly retry: string | null;
  /** The W3C `traceparent` stored at enqueue, and `tracestate` with it; null without tracing. */
  readonly traceparent: string | null;
  readonly tracestate: string | null;
  /** The last progress reported, as JSON text; null when none was. Written only by a fenced heartbeat. */
  readonly progress: string | null;
  readonly createdAt: number;
}

/**
 * Turns a stored row into the public {@link JobRecord}. The occurrence id is derived, not stored: a
 * minted job's id is its occurrence id; a one-shot job's occurrence is its own id at its first `runAt`.
 * It is derived when first read (an enumerable getter, so JSON and spreads still carry it): the
 * SHA-1 of a UUIDv5 was about 8 % of a draining worker's busy CPU, for handlers that never read it.
 */
export function toJob(row: JobRow): JobRecord {
  let occurrenceId: string | undefined;
  return {
    id: row.id,
    name: row.name,
    queue: row.queue,
    payload: JSON.parse(row.payload) as unknown,
    state: row.state,
    runAt: new Date(row.runAt),
    priority: row.priority,
    attempt: row.attempt,
    maxAttempts: row.maxAttempts,
    snoozes: row.snoozes,
    workerId: row.workerId,
    leasedUntil: row.leasedUntil === null ? null : new Date(row.leasedUntil),
    cancelRequested: row.cancelRequested,
    lastError: row.lastError,
    output: row.output === null ? null : (JSON.parse(row.output) as unknown),
    progress: row.progress === null ? null : (JSON.parse(row.progress) as unknown),
    scheduledFor: new Date(row.scheduledFor),
    get occurrenceId() {
      return (occurrenceId ??= row.scheduleId === null ? OccurrenceId.derive(row.id, new Date(row.scheduledFor)) : row.id);
    },
    scheduleId: row.scheduleId,
    pendingParents: row.pendingParents,
    dependencyMode: row.dependencyMode,
    concurrencyKey: row.concurrencyKey,
    group: row.groupKey,
    uniqueKey: row.uniqueKey,
    window: row.windowKind === null ? null : { kind: row.windowKind, key: row.windowKey!, endsAt: new Date(row.windowEndsAt!) },
    sequence: row.sequenceKey === null ? null : { key: row.sequenceKey, afterFailure: row.sequenceMode ?? 'block' },
    batch: row.batchId === null ? null : { id: row.batchId, callback: row.batchCallback },
    retry: row.retry === null ? null : (JSON.parse(row.retry) as Partial<RetryPolicy>),
    traceContext: storedTraceContext(row.traceparent, row.tracestate),
    createdAt: new Date(row.createdAt),
    updatedAt: new Date(row.updatedAt),
    finishedAt: row.finishedAt === null ? null : new Date(row.finishedAt),
  };
}

/** The order claims take due jobs in: priority (lower first), then run time, then enqueue order. */
export function claimOrder(a: Pick<JobRow, 'priority' | 'runAt' | 'seq'>, b: Pick<JobRow, 'priority' | 'runAt' | 'seq'>): number {
  return a.priority - b.priority || a.runAt - b.runAt || a.seq - b.seq;
}

/** The columns of a {@link JobStatus} as the SQL stores read them: output as JSON text, instants in epoch ms. */
export interface JobStatusRow {
  readonly id: string;
  readonly queue: string;
  readonly concurrency_key: string | null;
  readonly unique_key: string | null;
  readonly schedule_id: string | null;
  /** Epoch milliseconds. */
  readonly scheduled_for: number;
  readonly state: JobState;
  readonly attempt: number;
  readonly max_attempts: number;
  readonly last_error: string | null;
  readonly output: string | null;
  readonly finished_at: number | null;
}

/** A stored status row as the public {@link JobStatus}. */
export function toJobStatus(row: JobStatusRow): JobStatus {
  return {
    id: row.id,
    queue: row.queue,
    concurrencyKey: row.concurrency_key,
    uniqueKey: row.unique_key,
    scheduleId: row.schedule_id,
    scheduledFor: new Date(Math.floor(Number(row.scheduled_for) + 0.0005)),
    state: row.state,
    attempt: row.attempt,
    maxAttempts: row.max_attempts,
    lastError: row.last_error,
    output: row.output === null ? null : (JSON.parse(row.output) as unknown),
    finishedAt: row.finished_at === null ? null : new Date(Math.floor(row.finished_at + 0.0005)),
  };
}

/**
 * What a history entry records of the lease (HistoryEntry.workerId and leaseUntil): the worker a
 * change gave the lease to or took it from, and the deadline of the lease it ended. An insert
 * (no `before`) involves none.
 */
export function historyLease(before: JobRow | undefined, after: JobRow): { workerId: string | null; leaseUntil: number | null } {
  const ended = before?.state === 'running';
  return {
    workerId: after.state === 'running' ? after.workerId : ended ? before.workerId : null,
    leaseUntil: ended ? before.leasedUntil : null,
  };
}
