import type { NewJob } from '../enqueue-input.js';
import type { OperatorTransition } from '../operator-transition.js';
import type { ScheduleTx } from '../schedules/index.js';
import type { SqliteStatements } from './sqlite-statements.js';

/** The statements a schedule operation runs. */
export type SqliteScheduleStatements = Pick<
  SqliteStatements,
  'getSchedule' | 'listSchedules' | 'dueSchedules' | 'insertSchedule' | 'updateSchedule' | 'deleteSchedule' | 'jobState' | 'insertAudit' | 'nextDueSchedule'
>;

/** A ScheduleTx on the SQLite connection, inside a transaction the caller opened. */
export function sqliteScheduleTx(
  sql: SqliteScheduleStatements,
  now: number,
  paths: { insertJobs(jobs: readonly NewJob[]): Set<string>; replayJob(jobId: string): OperatorTransition },
): ScheduleTx {
  return {
    now,
    getSchedule: async (id) => sql.getSchedule(id),
    listSchedules: async () => sql.listSchedules(),
    dueSchedules: async (limit) => sql.dueSchedules(now, limit),
    insertSchedule: async (r) => sql.insertSchedule(r),
    updateSchedule: async (r) => sql.updateSchedule(r),
    deleteSchedule: async (id) => sql.deleteSchedule(id),
    jobStates: async (ids) => new Map(ids.flatMap((id) => {
      const state = sql.jobState(id);
      return state ? [[id, state] as const] : [];
    })),
    insertJobs: async (jobs) => paths.insertJobs(jobs),
    replayJob: async (jobId) => paths.replayJob(jobId),
    audit: async (entry) => sql.insertAudit(entry, now),
    nextDueAt: async () => sql.nextDueSchedule(),
  };
}
