import { isDeepStrictEqual } from 'node:util';
import {
  IllegalTransitionError,
  nextFireAfter,
  OccurrenceId,
  planMint,
  ScheduleNotFoundError,
  type JobRecord,
  type Recurrence,
} from '../../core/index.js';
import type { NewJob } from '../enqueue-input.js';
import type { EnqueueResult } from '../job-store.js';
import { replayResult } from '../checked/operator-transition.js';
import type { NewSchedule } from './schedule-input.js';
import type { ScheduleAdvance, ScheduleTx } from './schedule-tx.js';
import { toSchedule, type ScheduleRow } from './schedule.js';
import type { MintResult, Schedule, ScheduleReplayResult, ScheduleUpsertResult } from './schedule.types.js';

function recurrenceOf(definition: NewSchedule, anchorAt: number): Recurrence {
  const t = definition.timing;
  return t.kind === 'cron' ? { kind: 'cron', cron: t.cron, timezone: t.timezone } : { kind: 'interval', intervalMs: t.intervalMs, anchorAt };
}

function sameDefinition(row: ScheduleRow, definition: NewSchedule): boolean {
  const r = row.recurrence;
  const t = definition.timing;
  const timing =
    r.kind === 'cron'
      ? t.kind === 'cron' && t.cron === r.cron && t.timezone === r.timezone
      : t.kind === 'interval' && t.intervalMs === r.intervalMs && (t.anchorAt === null || t.anchorAt === r.anchorAt);
  return (
    timing &&
    row.name === definition.name &&
    row.queue === definition.queue &&
    // jsonb stores its own spelling of the JSON (spaces, key order), so compare values, not text.
    isDeepStrictEqual(JSON.parse(row.payload), JSON.parse(definition.payload)) &&
    row.maxAttempts === definition.maxAttempts &&
    row.catchUp === definition.catchUp &&
    row.noOverlap === definition.noOverlap &&
    row.misfireGraceMs === definition.misfireGraceMs
  );
}

async function require(tx: ScheduleTx, id: string): Promise<ScheduleRow> {
  const row = await tx.getSchedule(id);
  if (!row) throw new ScheduleNotFoundError(id);
  return row;
}

/**
 * Creates the schedule, or updates its definition when it changed. A changed definition starts
 * counting ticks from now; its state (paused, say) and history stay.
 */
export async function upsertSchedule(tx: ScheduleTx, definition: NewSchedule, actor: string): Promise<ScheduleUpsertResult> {
  const { now } = tx;
  const existing = await tx.getSchedule(definition.id);
  if (existing && sameDefinition(existing, definition)) return { schedule: toSchedule(existing), created: false, changed: false };
  const keepAnchor = existing?.recurrence.kind === 'interval' && definition.timing.kind === 'interval' && definition.timing.intervalMs === existing.recurrence.intervalMs;
  const anchorAt =
    definition.timing.kind === 'interval' && definition.timing.anchorAt !== null
      ? definition.timing.anchorAt
      : keepAnchor && existing?.recurrence.kind === 'interval'
        ? existing.recurrence.anchorAt
        : now;
  const recurrence = recurrenceOf(definition, anchorAt);
  const fields = {
    name: definition.name,
    queue: definition.queue,
    payload: definition.payload,
    maxAttempts: definition.maxAttempts,
    recurrence,
    catchUp: definition.catchUp,
    noOverlap: definition.noOverlap,
    misfireGraceMs: definition.misfireGraceMs,
    nextFireAt: nextFireAfter(recurrence, now),
    traceparent: definition.traceparent,
    tracestate: definition.tracestate,
    updatedAt: now,
  };
  if (existing) {
    const row: ScheduleRow = { ...existing, ...fields };
    await tx.updateSchedule(row);
    await tx.audit({ actor, action: 'schedule.update', target: row.id });
    return { schedule: toSchedule(row), created: false, changed: true };
  }
  const row: ScheduleRow = {
    id: definition.id,
    ...fields,
    state: 'active',
    lastFiredFor: null,
    lastJobId: null,
    haltedJobId: null,
    skippedTicks: 0,
    lastSkippedFor: null,
    lastSkipReason: null,
    createdAt: now,
  };
  if (!(await tx.insertSchedule(row))) {
    // Another node created it between our read and our insert: treat it as an update of theirs.
    return upsertSchedule(tx, definition, actor);
  }
  await tx.audit({ actor, action: 'schedule.create', target: row.id });
  return { schedule: toSchedule(row), created: true, changed: true };
}

/** Pauses minting; the schedule keeps its place and catches up under its policy on resume. */
export async function pauseSchedule(tx: ScheduleTx, id: string, actor: string): Promise<Schedule> {
  const row = await require(tx, id);
  if (row.state === 'dead_lettered') throw deadLettered(row, 'pause');
  if (row.state === 'paused') return toSchedule(row);
  const next: ScheduleRow = { ...row, state: 'paused', updatedAt: tx.now };
  await tx.updateSchedule(next);
  await tx.audit({ actor, action: 'schedule.pause', target: id });
  return toSchedule(next);
}

/** Resumes minting of a paused schedule, audited; a dead-lettered schedule is refused. */
export async function resumeSchedule(tx: ScheduleTx, id: string, actor: string): Promise<Schedule> {
  const row = await require(tx, id);
  if (row.state === 'dead_lettered') throw deadLettered(row, 'resume');
  if (row.state === 'active') return toSchedule(row);
  const next: ScheduleRow = { ...row, state: 'active', updatedAt: tx.now };
  await tx.updateSchedule(next);
  await tx.audit({ actor, action: 'schedule.resume', target: id });
  return toSchedule(next);
}

/** Mints one occurrence now, outside the pattern. It does not move the next tick. */
export async function triggerSchedule(tx: ScheduleTx, id: string, actor: string): Promise<EnqueueResult> {
  const row = await require(tx, id);
  if (row.state === 'dead_lettered') throw deadLettered(row, 'trigger');
  const [job] = occurrences(row, [tx.now]);
  const created = await tx.insertJobs([job!]);
  await tx.updateSchedule({ ...row, lastJobId: job!.id, lastFiredFor: tx.now, updatedAt: tx.now });
  await tx.audit({ actor, action: 'schedule.trigger', target: id, detail: { jobId: job!.id } });
  return { id: job!.id, created: created.has(job!.id) };
}

/** Deletes a schedule, audited; returns false when no schedule had that id. Jobs it minted stay. */
export async function removeSchedule(tx: ScheduleTx, id: string, actor: string): Promise<boolean> {
  const removed = await tx.deleteSchedule(id);
  if (removed) await tx.audit({ actor, action: 'schedule.remove', target: id });
  return removed;
}

/**
 * Brings a dead-lettered schedule back: the occurrence that stopped it is replayed (attempt 0, due
 * now) and the schedule mints again. Ticks it missed meanwhile follow its catch-up policy.
 */
export async function replaySchedule(tx: ScheduleTx, id: string, actor: string): Promise<ScheduleReplayResult> {
  const row = await require(tx, id);
  if (row.state !== 'dead_lettered') {
    throw new IllegalTransitionError(id, 'replay', row.state, `Schedule ${id} is ${row.state}; only a dead-lettered schedule can be replayed.`);
  }
  let job: JobRecord | null = null;
  if (row.haltedJobId !== null) {
    const outcome = await tx.replayJob(row.haltedJobId).catch((error: unknown) => {
      // The occurrence may be gone (retention) or already replayed; the schedule still comes back.
      if ((error as { code?: string }).code === 'JOB_NOT_FOUND') return null;
      throw error;
    });
    if (outcome?.result.ok) job = replayResult(outcome);
  }
  const next: ScheduleRow = { ...row, state: 'active', haltedJobId: null, updatedAt: tx.now };
  await tx.updateSchedule(next);
  await tx.audit({ actor, action: 'schedule.replay', target: id, detail: { jobId: row.haltedJobId } });
  return { schedule: toSchedule(next), job };
}

/**
 * Most work one minting pass takes on, in tick computations plus jobs minted. A pass plans due
 * schedules until it has spent this, then leaves the rest due for the next pass, so a transaction
 * that holds schedule rows stays short however far behind the schedules are (docs/schedules.md).
 */
export const MINT_PASS_WORK = 2_000;

/**
 * One minting pass: each due schedule mints the occurrences its plan allows, until the pass has
 * done {@link MINT_PASS_WORK}. The schedules are written back together and the jobs inserted
 * together, so a pass is a fixed handful of statements whatever it covers. A minted job's id is
 * its occurrence id, so if two nodes mint the same tick, the second insert writes nothing.
 */
export async function mintDue(tx: ScheduleTx, limit: number): Promise<MintResult> {
  const { now } = tx;
  const due = await tx.dueSchedules(limit);
  const watched = due.filter((row) => row.noOverlap && row.lastJobId !== null).map((row) => row.lastJobId!);
  const states = watched.length > 0 ? await tx.jobStates(watched) : new Map();
  const jobs: NewJob[] = [];
  const minted: { scheduleId: string; jobId: string; scheduledFor: Date }[] = [];
  const skipped: MintResult['skipped'][number][] = [];
  const advances: ScheduleAdvance[] = [];
  let work = 0;
  const countedTicks = (recurrence: Recurrence, after: number) => {
    work += 1;
    return nextFireAfter(recurrence, after);
  };
  for (const row of due) {
    if (work >= MINT_PASS_WORK) break;
    const previous = row.lastJobId === null ? undefined : states.get(row.lastJobId);
    const running = previous !== undefined && !['succeeded', 'dead_lettered', 'cancelled', 'quarantined'].includes(previous);
    const plan = planMint(row.recurrence, row, row.nextFireAt!, now, running, { nextFireAfter: countedTicks });
    work += plan.mint.length;
    const made = occurrences(row, plan.mint);
    jobs.push(...made);
    for (const job of made) minted.push({ scheduleId: row.id, jobId: job.id, scheduledFor: new Date(job.runAt!) });
    if (plan.skipped.count > 0) {
      const { count, reason, lowerBound } = plan.skipped;
      skipped.push(lowerBound ? { scheduleId: row.id, count, reason: reason!, lowerBound } : { scheduleId: row.id, count, reason: reason! });
    }
    const last = made.at(-1);
    advances.push({
      id: row.id,
      nextFireAt: plan.nextFireAt,
      lastFiredFor: last ? last.runAt! : row.lastFiredFor,
      lastJobId: last ? last.id : row.lastJobId,
      skippedTicks: row.skippedTicks + plan.skipped.count,
      lastSkippedFor: plan.skipped.count > 0 ? plan.skipped.last : row.lastSkippedFor,
      lastSkipReason: plan.skipped.count > 0 ? plan.skipped.reason : row.lastSkipReason,
      updatedAt: now,
    });
  }
  await tx.advanceSchedules(advances);
  const created = jobs.length > 0 ? await tx.insertJobs(jobs) : new Set<string>();
  const nextDueAt = await tx.nextDueAt();
  return {
    minted: minted.map((m) => ({ ...m, created: created.has(m.jobId) })),
    skipped,
    nextDueAt: nextDueAt === null ? null : new Date(nextDueAt),
    now: new Date(now),
  };
}

/** The jobs for a schedule's ticks: each job's id is the occurrence id of its tick. */
function occurrences(row: ScheduleRow, ticks: readonly number[]): NewJob[] {
  return ticks.map((tick) => ({
    id: OccurrenceId.derive(row.id, new Date(tick)),
    name: row.name,
    queue: row.queue,
    payload: row.payload,
    runAt: tick,
    delayMs: 0,
    maxAttempts: row.maxAttempts,
    scheduleId: row.id,
  }));
}

function deadLettered(row: ScheduleRow, action: string): IllegalTransitionError {
  return new IllegalTransitionError(row.id, action, 'dead_lettered', `Schedule ${row.id} is dead-lettered; replay it to bring it back.`);
}
