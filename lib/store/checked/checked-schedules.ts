import { assertPositiveInteger, assertUuid, InvalidArgumentError } from '../../core/index.js';
import type {
  EnqueueResult,
  MintDueParams,
  ScheduleActionParams,
  ScheduleListParams,
  ScheduleRef,
  ScheduleStore,
  ScheduleUpsertParams,
} from '../job-store.types.js';
import { actorOf } from './operator-options.js';
import { normalizeSchedule } from '../schedules/schedule-input.js';
import {
  mintDue,
  pauseSchedule,
  removeSchedule,
  replaySchedule,
  resumeSchedule,
  triggerSchedule,
  upsertSchedule,
} from '../schedules/schedule-operations.js';
import type { ScheduleTx } from '../schedules/schedule-tx.js';
import type { MintResult, Schedule, ScheduleReplayResult, ScheduleUpsertResult } from '../schedules/schedule.types.js';
import { CheckedOperator } from './checked-operator.js';
import { checkScheduleListParams, MAX_BATCH, paramsOf } from './store-params.js';

/** `CheckedStore`'s schedules: each operation checked here and run inside the driver's `scheduleTx`. */
export class CheckedSchedules extends CheckedOperator implements ScheduleStore {
  async scheduleUpsert(params: ScheduleUpsertParams): Promise<ScheduleUpsertResult> {
    const checked = paramsOf('scheduleUpsert', params, '{ schedule, actor? }');
    const definition = normalizeSchedule(checked.schedule, this.limits);
    const actor = actorOf(checked);
    return this.driver.scheduleTx((tx) => upsertSchedule(tx, definition, actor));
  }

  async scheduleGet(params: ScheduleRef): Promise<Schedule | null> {
    return this.driver.scheduleGet({ scheduleId: assertUuid(paramsOf('scheduleGet', params, '{ scheduleId }').scheduleId, 'scheduleId') });
  }

  async scheduleList(params?: ScheduleListParams): Promise<Schedule[]> {
    const checked = checkScheduleListParams(params);
    const page = await this.driver.scheduleList(checked);
    if (page === null) {
      throw new InvalidArgumentError(`after names schedule ${checked.after}, which is not stored; start again from the first page.`, 'after');
    }
    return page;
  }

  async schedulePause(params: ScheduleActionParams): Promise<Schedule> {
    return this.scheduleAction('schedulePause', params, pauseSchedule);
  }

  async scheduleResume(params: ScheduleActionParams): Promise<Schedule> {
    return this.scheduleAction('scheduleResume', params, resumeSchedule);
  }

  async scheduleTrigger(params: ScheduleActionParams): Promise<EnqueueResult> {
    return this.scheduleAction('scheduleTrigger', params, triggerSchedule);
  }

  async scheduleRemove(params: ScheduleActionParams): Promise<boolean> {
    return this.scheduleAction('scheduleRemove', params, removeSchedule);
  }

  async scheduleReplay(params: ScheduleActionParams): Promise<ScheduleReplayResult> {
    return this.scheduleAction('scheduleReplay', params, replaySchedule);
  }

  async scheduleMintDue(params: MintDueParams): Promise<MintResult> {
    const limit = assertPositiveInteger(paramsOf('scheduleMintDue', params, '{ limit }').limit, 'limit', MAX_BATCH);
    return this.driver.scheduleTx((tx) => mintDue(tx, limit));
  }

  private scheduleAction<T>(method: string, params: ScheduleActionParams, operation: (tx: ScheduleTx, id: string, actor: string) => Promise<T>): Promise<T> {
    const checked = paramsOf(method, params, '{ scheduleId, actor? }');
    const id = assertUuid(checked.scheduleId, 'scheduleId');
    const actor = actorOf(checked);
    return this.driver.scheduleTx((tx) => operation(tx, id, actor));
  }
}
