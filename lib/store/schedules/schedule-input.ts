import { v5 as uuidV5 } from 'uuid';
import { newUuidV7 } from '../new-uuid-v7.js';
import {
  assertCron,
  assertDelayMs,
  assertInstant,
  assertMaxAttempts,
  assertPositiveInteger,
  assertQueueName,
  assertTimeZone,
  assertUuid,
  assertWireName,
  checkTraceContext,
  encodeJson,
  InvalidArgumentError,
  checkOptions,
  type SchedulerLimits,
} from '../../core/index.js';
import { DEFAULT_MAX_ATTEMPTS, DEFAULT_QUEUE } from '../enqueue-input.js';
import type { ScheduleInput } from './schedule.types.js';

/** Namespace of the schedule ids derived from wire names (declared schedules). */
export const SCHEDULE_NAMESPACE = '3f1d2c4b-8e7a-4b5c-9d6e-0a1b2c3d4e5f';

/** The stable id of the schedule a `@Job({ schedule })` declares: every node derives the same one. */
export function declaredScheduleId(name: string): string {
  return uuidV5(`job:${name}`, SCHEDULE_NAMESPACE);
}

/** A validated schedule definition. */
export interface NewSchedule {
  readonly id: string;
  readonly name: string;
  readonly queue: string;
  readonly payload: string;
  readonly maxAttempts: number;
  readonly timing: { readonly kind: 'cron'; readonly cron: string; readonly timezone: string } | { readonly kind: 'interval'; readonly intervalMs: number; readonly anchorAt: number | null };
  readonly catchUp: 'skip' | 'coalesce';
  readonly noOverlap: boolean;
  readonly misfireGraceMs: number;
  /** The trace context to store when this definition is written; null without one. */
  readonly traceparent: string | null;
  readonly tracestate: string | null;
}

const KNOWN = new Set(['id', 'name', 'payload', 'queue', 'maxAttempts', 'cron', 'timezone', 'everyMs', 'startAt', 'catchUp', 'noOverlap', 'misfireGraceMs', 'traceContext']);

/** Checks a schedule definition (fields, name, recurrence, payload size) and fills in its defaults. */
export function normalizeSchedule(input: ScheduleInput, limits: SchedulerLimits): NewSchedule {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) {
    throw new InvalidArgumentError('A schedule must be an object with a name and a cron pattern or an interval.', 'schedule');
  }
  checkOptions(input, KNOWN, { what: 'schedule' });
  const name = assertWireName(input.name, limits.maxNameLength);
  if ((input.cron === undefined) === (input.everyMs === undefined)) {
    throw new InvalidArgumentError('A schedule needs exactly one of cron or everyMs.', 'cron');
  }
  let timing: NewSchedule['timing'];
  if (input.cron !== undefined) {
    if (input.startAt !== undefined) throw new InvalidArgumentError('startAt only applies to everyMs schedules.', 'startAt');
    timing = { kind: 'cron', cron: assertCron(input.cron), timezone: input.timezone === undefined ? 'UTC' : assertTimeZone(input.timezone) };
  } else {
    if (input.timezone !== undefined) throw new InvalidArgumentError('timezone only applies to cron schedules.', 'timezone');
    const intervalMs = assertPositiveInteger(input.everyMs, 'everyMs', 366 * 86_400_000);
    if (intervalMs < 1_000) throw new InvalidArgumentError(`everyMs must be at least 1000 (one second), got ${intervalMs}.`, 'everyMs');
    timing = { kind: 'interval', intervalMs, anchorAt: input.startAt === undefined ? null : assertInstant(input.startAt, 'startAt') };
  }
  if (input.catchUp !== undefined && input.catchUp !== 'skip' && input.catchUp !== 'coalesce') {
    throw new InvalidArgumentError(`catchUp must be "skip" or "coalesce", got ${JSON.stringify(input.catchUp)}.`, 'catchUp');
  }
  if (input.noOverlap !== undefined && typeof input.noOverlap !== 'boolean') {
    throw new InvalidArgumentError(`noOverlap must be true or false, got ${String(input.noOverlap)}.`, 'noOverlap');
  }
  const trace = checkTraceContext(input.traceContext);
  return {
    id: input.id === undefined ? newUuidV7() : assertUuid(input.id, 'id'),
    name,
    queue: input.queue === undefined ? DEFAULT_QUEUE : assertQueueName(input.queue),
    payload: encodeJson(input.payload === undefined ? {} : input.payload, { argument: 'payload', maxBytes: limits.maxPayloadBytes, maxDepth: limits.maxJsonDepth }),
    maxAttempts: input.maxAttempts === undefined ? DEFAULT_MAX_ATTEMPTS : assertMaxAttempts(input.maxAttempts, limits.maxAttemptsCeiling),
    timing,
    catchUp: input.catchUp ?? 'skip',
    noOverlap: input.noOverlap ?? false,
    misfireGraceMs: input.misfireGraceMs === undefined ? 60_000 : Math.min(assertDelayMs(input.misfireGraceMs, 'misfireGraceMs'), 2_147_483_647),
    traceparent: trace?.traceparent ?? null,
    tracestate: trace?.tracestate ?? null,
  };
}
