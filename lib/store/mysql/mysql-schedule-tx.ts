import type { JobState } from '../../core/index.js';
import type { ScheduleRow, ScheduleTx } from '../schedules/index.js';
import type { EffectWriter } from './mysql-effects.js';
import type { MysqlExecutor } from './mysql-executor.js';
import { fromMysqlInstant } from './mysql-instant.js';
import type { MysqlNaming } from './mysql-naming.js';
import type { MysqlOperator } from './mysql-operator.js';
import { instantParam } from './mysql-row.js';
import { fromMysqlScheduleRow, SCHEDULE_COLUMNS, scheduleValues, type MysqlScheduleRow } from './mysql-schedule-row.js';
import { isDuplicateId, writeEnqueue } from './queries/enqueue-jobs.query.js';
import { insertAuditStatement } from './queries/insert-audit.query.js';

/**
 * A ScheduleTx inside one of the store's transactions (`db`), judging by the clock `effects` read
 * at its start. Minted jobs and replays stage their effects on `effects`, which the caller commits
 * with the rest; the queues they made due are in `due` for hints after the commit.
 */
export function mysqlScheduleTx(db: MysqlExecutor, t: MysqlNaming, effects: EffectWriter, operator: MysqlOperator, due: Set<string>): ScheduleTx {
  const now = effects.now;
  const rows = async (sql: string, values: readonly unknown[] = []) => (await db.query<MysqlScheduleRow>(sql, values)).map(fromMysqlScheduleRow);
  return {
    now,
    getSchedule: async (id) => (await rows(`SELECT ${SCHEDULE_COLUMNS} FROM ${t.schedules} WHERE id = ? FOR UPDATE`, [id]))[0] ?? null,
    listSchedules: () => rows(`SELECT ${SCHEDULE_COLUMNS} FROM ${t.schedules} ORDER BY created_at, id`),
    // SKIP LOCKED: two nodes minting at once share the due schedules instead of waiting on each other.
    dueSchedules: (limit) =>
      rows(`SELECT ${SCHEDULE_COLUMNS} FROM ${t.schedules} WHERE state = 'active' AND next_fire_at <= ? ORDER BY next_fire_at LIMIT ? FOR UPDATE SKIP LOCKED`, [instantParam(now), limit]),
    insertSchedule: async (row: ScheduleRow) => {
      try {
        await db.run(`INSERT INTO ${t.schedules} (${SCHEDULE_COLUMNS}) VALUES (${SCHEDULE_COLUMNS.split(',').map(() => '?').join(', ')})`, scheduleValues(row));
        return true;
      } catch (error) {
        // The id exists (or another transaction committed it first): the statement alone is undone.
        if (isDuplicateId(error)) return false;
        throw error;
      }
    },
    updateSchedule: async (row) => {
      const [, ...values] = scheduleValues(row);
      const columns = SCHEDULE_COLUMNS.split(',').map((c) => c.trim()).slice(1);
      await db.run(`UPDATE ${t.schedules} SET ${columns.map((c) => `${c} = ?`).join(', ')} WHERE id = ?`, [...values, row.id]);
    },
    advanceSchedules: async (advances) => {
      if (advances.length === 0) return;
      // Only the columns a mint moves, on rows the pass locked; one query for the whole pass.
      await db.script(
        advances.map((a) => ({
          sql: `UPDATE ${t.schedules} SET next_fire_at = ?, last_fired_for = ?, last_job_id = ?, skipped_ticks = ?, last_skipped_for = ?, last_skip_reason = ?, updated_at = ? WHERE id = ?`,
          values: [instantParam(a.nextFireAt), instantParam(a.lastFiredFor), a.lastJobId, a.skippedTicks, instantParam(a.lastSkippedFor), a.lastSkipReason, instantParam(a.updatedAt), a.id],
        })),
      );
    },
    deleteSchedule: async (id) => {
      const [row] = await db.query<{ id: string }>(`SELECT id FROM ${t.schedules} WHERE id = ? FOR UPDATE`, [id]);
      if (!row) return false;
      await db.run(`DELETE FROM ${t.schedules} WHERE id = ?`, [id]);
      return true;
    },
    jobStates: async (ids) => {
      if (ids.length === 0) return new Map<string, JobState>();
      return new Map((await db.query<{ id: string; state: JobState }>(`SELECT id, state FROM ${t.jobs} WHERE id IN (?)`, [ids])).map((r) => [r.id, r.state]));
    },
    insertJobs: async (jobs) => {
      // What earlier steps staged goes first, so a retried batch rolls back its own rows only.
      await effects.flush(db);
      const planned = await writeEnqueue(db, t, jobs, effects, (statements) => db.script(statements));
      for (const queue of planned.due) due.add(queue);
      return planned.created;
    },
    replayJob: async (jobId) => {
      const transition = await operator.replayJob(db, effects, jobId);
      if (transition.result.ok) due.add(transition.after.queue);
      return transition;
    },
    audit: async (entry) => {
      const statement = insertAuditStatement(t, entry, now);
      await db.run(statement.sql, statement.values);
    },
    nextDueAt: async () => {
      const [row] = await db.query<{ next: string | null }>(`SELECT MIN(next_fire_at) AS next FROM ${t.schedules} WHERE state = 'active'`);
      return row?.next ? fromMysqlInstant(row.next).getTime() : null;
    },
  };
}
