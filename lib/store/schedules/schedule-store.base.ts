import { assertPositiveInteger, assertUuid, type SchedulerLimits } from '../../core/index.js';
import type { EnqueueResult, MintDueParams, ScheduleActionParams, ScheduleUpsertParams } from '../job-store.types.js';
import { actorOf } from '../operator-options.js';
import { MAX_BATCH, paramsOf } from '../store-params.js';
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
import type { MintResult, Schedule, ScheduleReplayResult, ScheduleUpsertResult } from './schedule.types.js';
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

  async scheduleUpsert(params: ScheduleUpsertParams): Promise<ScheduleUpsertResult> {
    const { schedule: input, ...options } = paramsOf('scheduleUpsert', params, '{ schedule, actor? }');
    const definition = normalizeSchedule(input, this.limits);
    const actor = actorOf(options);
    return this.scheduleTx((tx) => upsertSchedule(tx, definition, actor));
  }

  async schedulePause(params: ScheduleActionParams): Promise<Schedule> {
    return this.scheduleOperation('schedulePause', params, pauseSchedule);
  }

  async scheduleResume(params: ScheduleActionParams): Promise<Schedule> {
    return this.scheduleOperation('scheduleResume', params, resumeSchedule);
  }

  async scheduleTrigger(params: ScheduleActionParams): Promise<EnqueueResult> {
    return this.scheduleOperation('scheduleTrigger', params, triggerSchedule);
  }

  async scheduleRemove(params: ScheduleActionParams): Promise<boolean> {
    return this.scheduleOperation('scheduleRemove', params, removeSchedule);
  }

  async scheduleReplay(params: ScheduleActionParams): Promise<ScheduleReplayResult> {
    return this.scheduleOperation('scheduleReplay', params, replaySchedule);
  }

  async scheduleMintDue(params: MintDueParams): Promise<MintResult> {
    paramsOf('scheduleMintDue', params, '{ limit }');
    const limit = assertPositiveInteger(params?.limit, 'limit', MAX_BATCH);
    return this.scheduleTx((tx) => mintDue(tx, limit));
  }

  private scheduleOperation<T>(
    method: string,
    params: ScheduleActionParams,
    operation: (tx: ScheduleTx, id: string, actor: string) => Promise<T>,
  ): Promise<T> {
    const { scheduleId, ...options } = paramsOf(method, params, '{ scheduleId, actor? }');
    const id = assertUuid(scheduleId, 'scheduleId');
    const actor = actorOf(options);
    return this.scheduleTx((tx) => operation(tx, id, actor));
  }
}
