import { assertPositiveInteger, assertUuid, type JobRecord, type SchedulerLimits } from '../../core/index.js';
import type { EnqueueResult, OperatorOptions } from '../job-store.js';
import { actorOf } from '../operator-options.js';
import { MAX_BATCH } from '../store-params.js';
import { normalizeSchedule } from './schedule-input.js';
import {
  mintDue,
  pauseSchedule,
  removeSchedule,
  replaySchedule,
  resumeSchedule,
  triggerSchedule,
  upsertSchedule,
} from './schedule-operations.js';
import type { MintResult, Schedule, ScheduleInput, ScheduleUpsertResult } from './schedule.types.js';
import type { ScheduleTx } from './schedule-tx.js';

/**
 * The schedule half of the JobStore contract, the same for every adapter: validate, then run the
 * shared operation inside the adapter's transaction. An adapter extends this and supplies
 * `scheduleTx` (and the two reads).
 */
export abstract class ScheduleStoreBase {
  abstract readonly limits: SchedulerLimits;

  /** Runs `work` in one transaction of the adapter, with the store's clock read at its start. */
  protected abstract scheduleTx<T>(work: (tx: ScheduleTx) => Promise<T>): Promise<T>;

  async scheduleUpsert(input: ScheduleInput, options?: OperatorOptions): Promise<ScheduleUpsertResult> {
    const definition = normalizeSchedule(input, this.limits);
    const actor = actorOf(options);
    return this.scheduleTx((tx) => upsertSchedule(tx, definition, actor));
  }

  async schedulePause(scheduleId: string, options?: OperatorOptions): Promise<Schedule> {
    return this.scheduleOperation(scheduleId, options, pauseSchedule);
  }

  async scheduleResume(scheduleId: string, options?: OperatorOptions): Promise<Schedule> {
    return this.scheduleOperation(scheduleId, options, resumeSchedule);
  }

  async scheduleTrigger(scheduleId: string, options?: OperatorOptions): Promise<EnqueueResult> {
    return this.scheduleOperation(scheduleId, options, triggerSchedule);
  }

  async scheduleRemove(scheduleId: string, options?: OperatorOptions): Promise<boolean> {
    return this.scheduleOperation(scheduleId, options, removeSchedule);
  }

  async scheduleReplay(scheduleId: string, options?: OperatorOptions): Promise<{ schedule: Schedule; job: JobRecord | null }> {
    return this.scheduleOperation(scheduleId, options, replaySchedule);
  }

  async scheduleMintDue(params: { readonly limit: number }): Promise<MintResult> {
    const limit = assertPositiveInteger(params?.limit, 'limit', MAX_BATCH);
    return this.scheduleTx((tx) => mintDue(tx, limit));
  }

  private scheduleOperation<T>(
    scheduleId: string,
    options: OperatorOptions | undefined,
    operation: (tx: ScheduleTx, id: string, actor: string) => Promise<T>,
  ): Promise<T> {
    const id = assertUuid(scheduleId, 'scheduleId');
    const actor = actorOf(options);
    return this.scheduleTx((tx) => operation(tx, id, actor));
  }
}
