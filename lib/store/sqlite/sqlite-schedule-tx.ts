import type { Database, Statement } from 'better-sqlite3';
import type { JobState, Recurrence } from '../../core/index.js';
import type { NewJob } from '../enqueue-input.js';
import type { OperatorTransition } from '../operator-transition.js';
import type { AuditEntry, ScheduleRow, ScheduleTx } from '../schedules/index.js';
import type { SqliteNaming } from './sqlite-naming.js';

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
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

function params(row: ScheduleRow): SqliteScheduleRow {
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
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}

const COLUMNS = Object.keys(params({ recurrence: { kind: 'cron', cron: '', timezone: '' } } as ScheduleRow));

type StatementName = 'get' | 'list' | 'due' | 'insert' | 'update' | 'remove' | 'jobState' | 'audit' | 'auditList' | 'nextDue' | 'reactivate';
export type SqliteScheduleStatements = Record<StatementName, Statement>;

/** The schedule statements of one installation, prepared once. */
export function scheduleStatements(db: Database, t: SqliteNaming): SqliteScheduleStatements {
  return {
    get: db.prepare(`SELECT * FROM ${t.schedules} WHERE id = ?`),
    list: db.prepare(`SELECT * FROM ${t.schedules} ORDER BY created_at, id`),
    due: db.prepare(`SELECT * FROM ${t.schedules} WHERE state = 'active' AND next_fire_at <= ? ORDER BY next_fire_at LIMIT ?`),
    insert: db.prepare(`INSERT INTO ${t.schedules} (${COLUMNS.join(', ')}) VALUES (${COLUMNS.map((c) => `@${c}`).join(', ')}) ON CONFLICT (id) DO NOTHING`),
    update: db.prepare(`UPDATE ${t.schedules} SET ${COLUMNS.map((c) => `${c} = @${c}`).join(', ')} WHERE id = @id`),
    remove: db.prepare(`DELETE FROM ${t.schedules} WHERE id = ?`),
    jobState: db.prepare(`SELECT state FROM ${t.jobs} WHERE id = ?`).pluck(),
    audit: db.prepare(`INSERT INTO ${t.audit} (at, actor, action, target, detail) VALUES (?, ?, ?, ?, ?)`),
    auditList: db.prepare(`SELECT at, actor, action, target, detail FROM ${t.audit} ORDER BY id DESC LIMIT ?`),
    nextDue: db.prepare(`SELECT min(next_fire_at) FROM ${t.schedules} WHERE state = 'active'`).pluck(),
    reactivate: db.prepare(
      `UPDATE ${t.schedules} SET state = 'active', halted_job_id = NULL, updated_at = ? WHERE id = ? AND state = 'dead_lettered' AND halted_job_id = ?`,
    ),
  };
}

export function auditInsert(sql: SqliteScheduleStatements, entry: AuditEntry, now: number): void {
  sql.audit.run(now, entry.actor, entry.action, entry.target, entry.detail === undefined ? null : JSON.stringify(entry.detail));
}

/** A ScheduleTx on the SQLite connection, inside a transaction the caller opened. */
export function sqliteScheduleTx(
  sql: SqliteScheduleStatements,
  now: number,
  paths: { insertJobs(jobs: readonly NewJob[]): Set<string>; replayJob(jobId: string): OperatorTransition },
): ScheduleTx {
  const row = (r: unknown) => (r ? fromSqliteScheduleRow(r as SqliteScheduleRow) : null);
  return {
    now,
    getSchedule: async (id) => row(sql.get.get(id)),
    listSchedules: async () => (sql.list.all() as SqliteScheduleRow[]).map(fromSqliteScheduleRow),
    dueSchedules: async (limit) => (sql.due.all(now, limit) as SqliteScheduleRow[]).map(fromSqliteScheduleRow),
    insertSchedule: async (r) => sql.insert.run(params(r)).changes === 1,
    updateSchedule: async (r) => {
      sql.update.run(params(r));
    },
    deleteSchedule: async (id) => sql.remove.run(id).changes === 1,
    jobStates: async (ids) => new Map(ids.flatMap((id) => {
      const state = sql.jobState.get(id) as JobState | undefined;
      return state ? [[id, state] as const] : [];
    })),
    insertJobs: async (jobs) => paths.insertJobs(jobs),
    replayJob: async (jobId) => paths.replayJob(jobId),
    audit: async (entry) => auditInsert(sql, entry, now),
    nextDueAt: async () => (sql.nextDue.get() as number | null) ?? null,
  };
}
