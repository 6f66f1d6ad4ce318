import type { Recurrence } from '../../core/index.js';
import type { ScheduleRow } from '../schedules/index.js';
import { fromMysqlInstant } from './mysql-instant.js';
import { instantParam } from './mysql-row.js';

/** A schedules row as the adapter's typeCast returns it (mysql-executor.ts): instants as UTC text, booleans as numbers. */
export interface MysqlScheduleRow {
  id: string;
  name: string;
  queue: string;
  payload: string;
  max_attempts: number;
  cron: string | null;
  timezone: string | null;
  interval_ms: number | null;
  anchor_at: string | null;
  catch_up: 'skip' | 'coalesce';
  no_overlap: number;
  misfire_grace_ms: number;
  state: ScheduleRow['state'];
  next_fire_at: string | null;
  last_fired_for: string | null;
  last_job_id: string | null;
  halted_job_id: string | null;
  skipped_ticks: number;
  last_skipped_for: string | null;
  last_skip_reason: ScheduleRow['lastSkipReason'];
  created_at: string;
  updated_at: string;
  traceparent: string | null;
  tracestate: string | null;
}

/** Every column of a schedule, in the order of {@link scheduleValues}. */
export const SCHEDULE_COLUMNS =
  'id, name, queue, payload, max_attempts, cron, timezone, interval_ms, anchor_at, catch_up, no_overlap, misfire_grace_ms, state, next_fire_at, ' +
  'last_fired_for, last_job_id, halted_job_id, skipped_ticks, last_skipped_for, last_skip_reason, created_at, updated_at, traceparent, tracestate';

const ms = (text: string): number => fromMysqlInstant(text).getTime();
const msOrNull = (text: string | null): number | null => (text === null ? null : ms(text));

export function fromMysqlScheduleRow(r: MysqlScheduleRow): ScheduleRow {
  const recurrence: Recurrence =
    r.cron !== null ? { kind: 'cron', cron: r.cron, timezone: r.timezone ?? 'UTC' } : { kind: 'interval', intervalMs: Number(r.interval_ms), anchorAt: ms(r.anchor_at!) };
  return {
    id: r.id,
    name: r.name,
    queue: r.queue,
    payload: r.payload,
    maxAttempts: r.max_attempts,
    recurrence,
    catchUp: r.catch_up,
    noOverlap: Number(r.no_overlap) === 1,
    misfireGraceMs: r.misfire_grace_ms,
    state: r.state,
    nextFireAt: msOrNull(r.next_fire_at),
    lastFiredFor: msOrNull(r.last_fired_for),
    lastJobId: r.last_job_id,
    haltedJobId: r.halted_job_id,
    skippedTicks: Number(r.skipped_ticks),
    lastSkippedFor: msOrNull(r.last_skipped_for),
    lastSkipReason: r.last_skip_reason,
    traceparent: r.traceparent,
    tracestate: r.tracestate,
    createdAt: ms(r.created_at),
    updatedAt: ms(r.updated_at),
  };
}

/** A schedule's values in {@link SCHEDULE_COLUMNS} order, instants as UTC text, for an insert or an update. */
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
    r.kind === 'interval' ? instantParam(r.anchorAt) : null,
    row.catchUp,
    row.noOverlap,
    row.misfireGraceMs,
    row.state,
    instantParam(row.nextFireAt),
    instantParam(row.lastFiredFor),
    row.lastJobId,
    row.haltedJobId,
    row.skippedTicks,
    instantParam(row.lastSkippedFor),
    row.lastSkipReason,
    instantParam(row.createdAt),
    instantParam(row.updatedAt),
    row.traceparent,
    row.tracestate,
  ];
}
