import type { NewJob } from '../enqueue-input.js';
import type { OperatorTransition } from '../checked/operator-transition.js';
import type { ScheduleTx } from '../schedules/index.js';
import type { PgExecutor } from './pg-executor.js';
import type { PostgresStatements } from './postgres-statements.js';

/** The statements a schedule operation runs. */
export type ScheduleStatements = Pick<
  PostgresStatements,
  | 'databaseNow'
  | 'lockSchedule'
  | 'listSchedules'
  | 'dueSchedules'
  | 'insertSchedule'
  | 'updateSchedule'
  | 'advanceSchedules'
  | 'deleteSchedule'
  | 'jobStates'
  | 'insertAudit'
  | 'nextDueSchedule'
>;

/** A ScheduleTx on one PostgreSQL connection inside an open transaction. */
export async function postgresScheduleTx(
  db: PgExecutor,
  sql: ScheduleStatements,
  paths: { insertJobs(db: PgExecutor, jobs: readonly NewJob[]): Promise<Set<string>>; replayJob(db: PgExecutor, jobId: string): Promise<OperatorTransition> },
): Promise<ScheduleTx> {
  return {
    now: await sql.databaseNow(db),
    getSchedule: (id) => sql.lockSchedule(db, id),
    listSchedules: () => sql.listSchedules(db),
    dueSchedules: (limit) => sql.dueSchedules(db, limit),
    insertSchedule: (row) => sql.insertSchedule(db, row),
    updateSchedule: (row) => sql.updateSchedule(db, row),
    advanceSchedules: (advances) => sql.advanceSchedules(db, advances),
    deleteSchedule: (id) => sql.deleteSchedule(db, id),
    jobStates: (ids) => sql.jobStates(db, ids),
    insertJobs: (jobs) => paths.insertJobs(db, jobs),
    replayJob: (jobId) => paths.replayJob(db, jobId),
    audit: (entry) => sql.insertAudit(db, entry),
    nextDueAt: () => sql.nextDueSchedule(db),
  };
}
