import type { Recurrence } from '../../core/index.js';
import type { ScheduleRow } from '../schedules/index.js';

/** A schedule as the schedules table stores it. */
export interface SqliteScheduleRow {
  id: string;
  name: string;
  queue: string;
  payload: string;
  max_attempts: number;
  cron: string | null;
  timezone: string | null;
  interval_ms: number | null;
  anchor_at: number | null;
  catch_up: 'skip' | 'coalesce';
  no_overlap: number;
  misfire_grace_ms: number;
  state: ScheduleRow['state'];
  next_fire_at: number | null;
  last_fired_for: number | null;
  last_job_id: string | null;
  halted_job_id: string | null;
  skipped_ticks: number;
  last_skipped_for: number | null;
  last_skip_reason: ScheduleRow['lastSkipReason'];
  traceparent: string | null;
  tracestate: string | null;
  created_at: number;
  updated_at: number;
}

export function fromSqliteScheduleRow(r: SqliteScheduleRow): ScheduleRow {
  const recurrence: Recurrence =
    r.cron !== null ? { kind: 'cron', cron: r.cron, timezone: r.timezone ?? 'UTC' } : { kind: 'interval', intervalMs: r.interval_ms!, anchorAt: r.anchor_at! };
  return {
    id: r.id,
    name: r.name,
    queue: r.queue,
    payload: r.payload,
    maxAttempts: r.max_attempts,
    recurrence,
    catchUp: r.catch_up,
    noOverlap: r.no_overlap === 1,
    misfireGraceMs: r.misfire_grace_ms,
    state: r.state,
    nextFireAt: r.next_fire_at,
    lastFiredFor: r.last_fired_for,
    lastJobId: r.last_job_id,
    haltedJobId: r.halted_job_id,
    skippedTicks: r.skipped_ticks,
    lastSkippedFor: r.last_skipped_for,
    lastSkipReason: r.last_skip_reason,
    traceparent: r.traceparent,
    tracestate: r.tracestate,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

/** A schedule as the named parameters of the insert and the update. */
export function scheduleParams(row: ScheduleRow): SqliteScheduleRow {
  const r = row.recurrence;
  return {
    id: row.id,
    name: row.name,
    queue: row.queue,
    payload: row.payload,
    max_attempts: row.maxAttempts,
    cron: r.kind === 'cron' ? r.cron : null,
    timezone: r.kind === 'cron' ? r.timezone : null,
    interval_ms: r.kind === 'interval' ? r.intervalMs : null,
    anchor_at: r.kind === 'interval' ? r.anchorAt : null,
    catch_up: row.catchUp,
    no_overlap: row.noOverlap ? 1 : 0,
    misfire_grace_ms: row.misfireGraceMs,
    state: row.state,
    next_fire_at: row.nextFireAt,
    last_fired_for: row.lastFiredFor,
    last_job_id: row.lastJobId,
    halted_job_id: row.haltedJobId,
    skipped_ticks: row.skippedTicks,
    last_skipped_for: row.lastSkippedFor,
    last_skip_reason: row.lastSkipReason,
    traceparent: row.traceparent,
    tracestate: row.tracestate,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}

/** The schedules table's columns, in the order of {@link SqliteScheduleRow}. */
export const SCHEDULE_COLUMNS = Object.keys(scheduleParams({ recurrence: { kind: 'cron', cron: '', timezone: '' } } as ScheduleRow));
