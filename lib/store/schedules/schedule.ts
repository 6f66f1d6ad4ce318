import { storedTraceContext, type Recurrence } from '../../core/index.js';
import type { Schedule, ScheduleState } from './schedule.types.js';

/** A schedule as adapters keep it, instants in epoch milliseconds, payload as JSON text. */
export interface ScheduleRow {
  readonly id: string;
  readonly name: string;
  readonly queue: string;
  readonly payload: string;
  readonly maxAttempts: number;
  readonly recurrence: Recurrence;
  readonly catchUp: 'skip' | 'coalesce';
  readonly noOverlap: boolean;
  readonly misfireGraceMs: number;
  readonly state: ScheduleState;
  readonly nextFireAt: number | null;
  readonly lastFiredFor: number | null;
  readonly lastJobId: string | null;
  readonly haltedJobId: string | null;
  readonly skippedTicks: number;
  readonly lastSkippedFor: number | null;
  readonly lastSkipReason: 'missed' | 'overlap' | null;
  /** The W3C context stored with the definition (see `Schedule.traceContext`). */
  readonly traceparent: string | null;
  readonly tracestate: string | null;
  readonly createdAt: number;
  readonly updatedAt: number;
}

const date = (ms: number | null) => (ms === null ? null : new Date(ms));

/** A stored schedule row as callers see it, with its instants as Dates. */
export function toSchedule(row: ScheduleRow): Schedule {
  const r = row.recurrence;
  return {
    id: row.id,
    name: row.name,
    queue: row.queue,
    payload: JSON.parse(row.payload) as unknown,
    maxAttempts: row.maxAttempts,
    recurrence: r.kind === 'cron' ? { kind: 'cron', cron: r.cron, timezone: r.timezone } : { kind: 'interval', everyMs: r.intervalMs, anchorAt: new Date(r.anchorAt) },
    catchUp: row.catchUp,
    noOverlap: row.noOverlap,
    misfireGraceMs: row.misfireGraceMs,
    state: row.state,
    nextFireAt: date(row.nextFireAt),
    lastFiredFor: date(row.lastFiredFor),
    lastJobId: row.lastJobId,
    haltedJobId: row.haltedJobId,
    skippedTicks: row.skippedTicks,
    lastSkippedFor: date(row.lastSkippedFor),
    lastSkipReason: row.lastSkipReason,
    traceContext: storedTraceContext(row.traceparent, row.tracestate),
    createdAt: new Date(row.createdAt),
    updatedAt: new Date(row.updatedAt),
  };
}
