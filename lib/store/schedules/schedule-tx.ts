import type { JobState } from '../../core/index.js';
import type { NewJob } from '../enqueue-input.js';
import type { OperatorTransition } from '../checked/operator-transition.js';
import type { ScheduleRow } from './schedule.js';

/** One operator action, as the audit log keeps it. */
export interface AuditEntry {
  readonly actor: string;
  readonly action: string;
  readonly target: string;
  readonly detail?: Record<string, unknown>;
}

/** Where a minting pass leaves one schedule: its next tick and what it minted or skipped. */
export type ScheduleAdvance = Pick<
  ScheduleRow,
  'id' | 'nextFireAt' | 'lastFiredFor' | 'lastJobId' | 'skippedTicks' | 'lastSkippedFor' | 'lastSkipReason' | 'updatedAt'
>;

/**
 * The primitive reads and writes the schedule operations need, run inside one transaction of the
 * adapter. The operations themselves (`schedule-operations.ts`) are written once against this.
 */
export interface ScheduleTx {
  /** The store's clock, read once at the start of the transaction. */
  readonly now: number;
  /** Reads a schedule and locks it for the rest of the transaction. */
  getSchedule(id: string): Promise<ScheduleRow | null>;
  listSchedules(): Promise<ScheduleRow[]>;
  /** Active schedules with a tick at or before `now`, locked; rows another minter holds are skipped. */
  dueSchedules(limit: number): Promise<ScheduleRow[]>;
  /** Inserts unless the id exists; false when it did. */
  insertSchedule(row: ScheduleRow): Promise<boolean>;
  updateSchedule(row: ScheduleRow): Promise<void>;
  /**
   * Writes back where a minting pass left each schedule it locked: one statement for the whole
   * pass on PostgreSQL, so a pass costs a few round trips however many schedules it covers.
   */
  advanceSchedules(advances: readonly ScheduleAdvance[]): Promise<void>;
  deleteSchedule(id: string): Promise<boolean>;
  jobStates(ids: readonly string[]): Promise<Map<string, JobState>>;
  /** Writes jobs (skipping ids that exist) and sends wake-up hints for due ones. */
  insertJobs(jobs: readonly NewJob[]): Promise<Set<string>>;
  /** Replays one job through the lifecycle, as `jobReplay` does. */
  replayJob(jobId: string): Promise<OperatorTransition>;
  audit(entry: AuditEntry): Promise<void>;
  /** The earliest tick of any active schedule. */
  nextDueAt(): Promise<number | null>;
}
