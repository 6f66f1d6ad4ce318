import type { Recurrence } from '../../core/index.js';
import type { ScheduleRow } from '../schedules/index.js';
import { pgInstant } from './pg-instant.js';

/** A schedule as the schedules table returns it (payload as text). */
export interface PgScheduleRow {
  id: string;
  name: string;
  queue: string;
  payload: string;
  max_attempts: number;
  cron: string | null;
  timezone: string | null;
  interval_ms: string | null;
  anchor_at: Date | null;
  catch_up: 'skip' | 'coalesce';
  no_overlap: boolean;
  misfire_grace_ms: number;
  state: ScheduleRow['state'];
  next_fire_at: Date | null;
  last_fired_for: Date | null;
  last_job_id: string | null;
  halted_job_id: string | null;
  skipped_ticks: string;
  last_skipped_for: Date | null;
  last_skip_reason: ScheduleRow['lastSkipReason'];
  traceparent: string | null;
  tracestate: string | null;
  created_at: Date;
  updated_at: Date;
}

const ms = (d: Date | null) => (d === null ? null : d.getTime());
const at = (n: number | null) => (n === null ? null : pgInstant(n));

export function fromPgScheduleRow(r: PgScheduleRow): ScheduleRow {
  const recurrence: Recurrence =
    r.cron !== null ? { kind: 'cron', cron: r.cron, timezone: r.timezone ?? 'UTC' } : { kind: 'interval', intervalMs: Number(r.interval_ms), anchorAt: r.anchor_at!.getTime() };
  return {
    id: r.id,
    name: r.name,
    queue: r.queue,
    payload: r.payload,
    maxAttempts: r.max_attempts,
    recurrence,
    catchUp: r.catch_up,
    noOverlap: r.no_overlap,
    misfireGraceMs: r.misfire_grace_ms,
    state: r.state,
    nextFireAt: ms(r.next_fire_at),
    lastFiredFor: ms(r.last_fired_for),
    lastJobId: r.last_job_id,
    haltedJobId: r.halted_job_id,
    skippedTicks: Number(r.skipped_ticks),
    lastSkippedFor: ms(r.last_skipped_for),
    lastSkipReason: r.last_skip_reason,
    traceparent: r.traceparent,
    tracestate: r.tracestate,
    createdAt: r.created_at.getTime(),
    updatedAt: r.updated_at.getTime(),
  };
}

/** A schedule's values in {@link SCHEDULE_COLUMNS} order, for the insert and the update. */
export function scheduleValues(row: ScheduleRow): unknown[] {
  const r = row.recurrence;
  return [
    row.id,
    row.name,
    row.queue,
    row.payload,
    row.maxAttempts,
    r.kind === 'cron' ? r.cron : null,
    r.kind === 'cron' ? r.timezone : null,
    r.kind === 'interval' ? r.intervalMs : null,
    r.kind === 'interval' ? pgInstant(r.anchorAt) : null,
    row.catchUp,
    row.noOverlap,
    row.misfireGraceMs,
    row.state,
    at(row.nextFireAt),
    at(row.lastFiredFor),
    row.lastJobId,
    row.haltedJobId,
    row.skippedTicks,
    at(row.lastSkippedFor),
    row.lastSkipReason,
    pgInstant(row.createdAt),
    pgInstant(row.updatedAt),
    row.traceparent,
    row.tracestate,
  ];
}

export const SCHEDULE_COLUMNS =
  'id, name, queue, payload, max_attempts, cron, timezone, interval_ms, anchor_at, catch_up, no_overlap, misfire_grace_ms, state, next_fire_at, ' +
  'last_fired_for, last_job_id, halted_job_id, skipped_ticks, last_skipped_for, last_skip_reason, created_at, updated_at, traceparent, tracestate';
/** The columns a read selects: every one, the payload as text. */
export const SCHEDULE_SELECT = SCHEDULE_COLUMNS.replace('payload', 'payload::text AS payload');
/** $1 to $24 in column order, the payload cast to jsonb. */
export const SCHEDULE_PLACEHOLDERS = SCHEDULE_COLUMNS.split(', ').map((_c, i) => (i === 3 ? `$${i + 1}::jsonb` : `$${i + 1}`)).join(', ');
