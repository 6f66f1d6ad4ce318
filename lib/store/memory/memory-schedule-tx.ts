import type { JobState } from '../../core/index.js';
import type { NewJob } from '../enqueue-input.js';
import type { OperatorTransition } from '../checked/operator-transition.js';
import type { AuditEntry, ScheduleRow, ScheduleTx } from '../schedules/index.js';

/** What the in-memory store lends a schedule operation: its maps and its own job paths. */
export interface MemoryScheduleState {
  readonly schedules: Map<string, ScheduleRow>;
  jobState(id: string): JobState | undefined;
  insertJobs(jobs: readonly NewJob[]): Set<string>;
  replayJob(jobId: string): OperatorTransition;
  audit(entry: AuditEntry): void;
}

/** The schedules oldest first, as scheduleList returns them. */
export function schedulesInOrder(schedules: ReadonlyMap<string, ScheduleRow>): ScheduleRow[] {
  return [...schedules.values()].sort((a, b) => a.createdAt - b.createdAt || a.id.localeCompare(b.id));
}

/** A ScheduleTx over the in-memory store. One call runs start to finish with nothing in between. */
export function memoryScheduleTx(state: MemoryScheduleState, now: number): ScheduleTx {
  const { schedules } = state;
  return {
    now,
    getSchedule: async (id) => schedules.get(id) ?? null,
    listSchedules: async () => schedulesInOrder(schedules),
    dueSchedules: async (limit) =>
      [...schedules.values()]
        .filter((row) => row.state === 'active' && row.nextFireAt !== null && row.nextFireAt <= now)
        .sort((a, b) => a.nextFireAt! - b.nextFireAt!)
        .slice(0, limit),
    insertSchedule: async (row) => {
      if (schedules.has(row.id)) return false;
      schedules.set(row.id, row);
      return true;
    },
    updateSchedule: async (row) => {
      schedules.set(row.id, row);
    },
    advanceSchedules: async (advances) => {
      for (const advance of advances) {
        const row = schedules.get(advance.id);
        if (row) schedules.set(row.id, { ...row, ...advance });
      }
    },
    deleteSchedule: async (id) => schedules.delete(id),
    jobStates: async (ids) => new Map(ids.flatMap((id) => (state.jobState(id) ? [[id, state.jobState(id)!] as const] : []))),
    insertJobs: async (jobs) => state.insertJobs(jobs),
    replayJob: async (jobId) => state.replayJob(jobId),
    audit: async (entry) => state.audit(entry),
    nextDueAt: async () => {
      const ticks = [...schedules.values()].filter((r) => r.state === 'active' && r.nextFireAt !== null).map((r) => r.nextFireAt!);
      return ticks.length > 0 ? Math.min(...ticks) : null;
    },
  };
}
