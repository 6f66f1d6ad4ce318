import type { JobState, Recurrence } from '../../core/index.js';
import type { NewJob } from '../enqueue-input.js';
import type { OperatorTransition } from '../operator-transition.js';
import type { AuditEntry, ScheduleRow, ScheduleTx } from '../schedules/index.js';
import type { PgExecutor } from './pg-executor.js';
import { pgInstant } from './pg-instant.js';
import type { PostgresNaming } from './postgres-naming.js';

interface PgScheduleRow {
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
  created_at: Date;
  updated_at: Date;
}

const ms = (d: Date | null) => (d === null ? null : d.getTime());
const at = (n: number | null) => (n === null ? null : pgInstant(n));

function fromRow(r: PgScheduleRow): ScheduleRow {
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
    createdAt: r.created_at.getTime(),
    updatedAt: r.updated_at.getTime(),
  };
}

function values(row: ScheduleRow): unknown[] {
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
  ];
}

const COLUMNS =
  'id, name, queue, payload, max_attempts, cron, timezone, interval_ms, anchor_at, catch_up, no_overlap, misfire_grace_ms, state, next_fire_at, ' +
  'last_fired_for, last_job_id, halted_job_id, skipped_ticks, last_skipped_for, last_skip_reason, created_at, updated_at';
const SELECT = COLUMNS.replace('payload', 'payload::text AS payload');
const PLACEHOLDERS = COLUMNS.split(', ').map((_c, i) => (i === 3 ? `$${i + 1}::jsonb` : `$${i + 1}`)).join(', ');

/** The schedule statements of one installation, built once. */
export function scheduleStatements(t: PostgresNaming) {
  return {
    get: `SELECT ${SELECT} FROM ${t.schedules} WHERE id = $1 FOR UPDATE`,
    list: `SELECT ${SELECT} FROM ${t.schedules} ORDER BY created_at, id`,
    due: `SELECT ${SELECT} FROM ${t.schedules} WHERE state = 'active' AND next_fire_at <= now() ORDER BY next_fire_at LIMIT $1 FOR UPDATE SKIP LOCKED`,
    insert: `INSERT INTO ${t.schedules} (${COLUMNS}) VALUES (${PLACEHOLDERS}) ON CONFLICT (id) DO NOTHING RETURNING id`,
    update: `UPDATE ${t.schedules} SET (${COLUMNS}) = (${PLACEHOLDERS}) WHERE id = $1`,
    remove: `DELETE FROM ${t.schedules} WHERE id = $1 RETURNING id`,
    jobStates: `SELECT id, state FROM ${t.jobs} WHERE id = ANY($1::uuid[])`,
    audit: `INSERT INTO ${t.audit} (actor, action, target, detail) VALUES ($1, $2, $3, $4::jsonb)`,
    nextDue: `SELECT min(next_fire_at) AS next FROM ${t.schedules} WHERE state = 'active'`,
    now: `SELECT (extract(epoch from now()) * 1000)::bigint AS now`,
    getOne: `SELECT ${SELECT} FROM ${t.schedules} WHERE id = $1`,
  };
}

export type ScheduleStatements = ReturnType<typeof scheduleStatements>;

/** Writes one audit entry on `db` (inside whatever transaction it is in). */
export function auditInsert(db: PgExecutor, sql: ScheduleStatements, entry: AuditEntry): Promise<unknown> {
  return db.query(sql.audit, [entry.actor, entry.action, entry.target, entry.detail === undefined ? null : JSON.stringify(entry.detail)]);
}

/** A ScheduleTx on one PostgreSQL connection inside an open transaction. */
export async function postgresScheduleTx(
  db: PgExecutor,
  sql: ScheduleStatements,
  paths: { insertJobs(db: PgExecutor, jobs: readonly NewJob[]): Promise<Set<string>>; replayJob(db: PgExecutor, jobId: string): Promise<OperatorTransition> },
): Promise<ScheduleTx> {
  const [{ now }] = await db.query<{ now: string }>(sql.now);
  return {
    now: Number(now),
    getSchedule: async (id) => {
      const [row] = await db.query<PgScheduleRow>(sql.get, [id]);
      return row ? fromRow(row) : null;
    },
    listSchedules: async () => (await db.query<PgScheduleRow>(sql.list)).map(fromRow),
    dueSchedules: async (limit) => (await db.query<PgScheduleRow>(sql.due, [limit])).map(fromRow),
    insertSchedule: async (row) => (await db.query(sql.insert, values(row))).length === 1,
    updateSchedule: async (row) => {
      await db.query(sql.update, values(row));
    },
    deleteSchedule: async (id) => (await db.query(sql.remove, [id])).length === 1,
    jobStates: async (ids) => new Map((await db.query<{ id: string; state: JobState }>(sql.jobStates, [ids])).map((r) => [r.id, r.state])),
    insertJobs: (jobs) => paths.insertJobs(db, jobs),
    replayJob: (jobId) => paths.replayJob(db, jobId),
    audit: async (entry) => {
      await auditInsert(db, sql, entry);
    },
    nextDueAt: async () => {
      const [{ next }] = await db.query<{ next: Date | null }>(sql.nextDue);
      return next === null ? null : next.getTime();
    },
  };
}

export { fromRow as fromPgScheduleRow, type PgScheduleRow };
