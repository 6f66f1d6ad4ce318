import type { NewJob } from '../enqueue-input.js';
import type { OperatorTransition } from '../checked/operator-transition.js';
import type { ScheduleTx } from '../schedules/index.js';
import type { SqliteConnection } from './sqlite-connection.js';
import type { SqliteHints } from './sqlite-hints.js';
import type { SqliteOperator } from './sqlite-operator.js';
import type { SqliteStatements } from './sqlite-statements.js';

/** The statements a schedule operation runs. */
export type SqliteScheduleStatements = Pick<
  SqliteStatements,
  'getSchedule' | 'listSchedules' | 'dueSchedules' | 'insertSchedule' | 'updateSchedule' | 'advanceSchedules' | 'deleteSchedule' | 'jobState' | 'insertAudit' | 'nextDueSchedule'
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
    advanceSchedules: async (advances) => sql.advanceSchedules(advances),
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

/**
 * Runs a schedule operation as one IMMEDIATE transaction (a savepoint inside a scheduler section
 * that already has one open). The operation awaits between its statements, which is safe because
 * the gate keeps the connection for it throughout; the queues it made due are hinted after commit.
 */
export async function runSqliteScheduleTx<T>(
  conn: SqliteConnection,
  hints: SqliteHints,
  operator: SqliteOperator,
  work: (tx: ScheduleTx) => Promise<T>,
): Promise<T> {
  const { db, gate } = conn;
  const holder = gate.callerHolds();
  if (holder?.kind === 'host') throw conn.insideHostTransaction();
  const nested = holder?.kind === 'scheduler' && db.inTransaction;
  const run = async () => {
    if (nested) db.exec('SAVEPOINT durable_scheduler_schedule');
    else await conn.retryBusy(() => db.exec('BEGIN IMMEDIATE'));
    const due = new Set<string>();
    try {
      const tx = sqliteScheduleTx(conn.statements(), conn.now(), {
        insertJobs: (jobs) => {
          const inserted = conn.statements().enqueue(jobs, conn.now());
          for (const queue of inserted.due) due.add(queue);
          return inserted.created;
        },
        replayJob: (jobId) => {
          const outcome = operator.replayJob(jobId, conn.now());
          if (outcome.result.ok) due.add(outcome.after.queue);
          return outcome;
        },
      });
      const result = await work(tx);
      db.exec(nested ? 'RELEASE durable_scheduler_schedule' : 'COMMIT');
      for (const queue of due) hints.emit(queue);
      return result;
    } catch (error) {
      db.exec(nested ? 'ROLLBACK TO durable_scheduler_schedule; RELEASE durable_scheduler_schedule' : 'ROLLBACK');
      throw error;
    }
  };
  return holder ? run() : gate.exclusive(run);
}
