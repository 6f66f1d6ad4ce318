import { nextFireAfter, type Recurrence } from '../../core/index.js';
import type { MintResult, Schedule } from '../../store/index.js';
import type { SimEvent } from '../sim-event.js';
import { Oracle, TERMINAL, type RunEnd } from './oracle.js';

interface Tracked {
  readonly recurrence: Recurrence;
  readonly catchUp: 'skip' | 'coalesce';
  readonly noOverlap: boolean;
  readonly graceMs: number;
  /** The first tick the schedule had when it was created. */
  readonly firstFireAt: number | null;
  minted: number;
  skipped: number;
  lowerBound: boolean;
  lastJobId: string | null;
}

/**
 * Every minting pass follows the schedule's catch-up policy, after any outage, and every tick is
 * accounted for once. Per pass, from what the store returned and the pass's instant:
 * - no tick is minted before its time;
 * - with `skip`, no tick is minted that was more than the misfire grace old;
 * - with `coalesce`, such a tick is minted only as the pass's single make-up job for that
 *   schedule, at the latest due tick;
 * - with `noOverlap`, at most one job is minted, and none while the previous occurrence is not
 *   terminal.
 * At the end, each schedule's minted and skipped ticks add up to the ticks between its first tick
 * and where it stands (at least that many when a count was reported as a lower bound), and the
 * skipped count it stored is the sum of those reported.
 */
export class ScheduleCatchUpOracle extends Oracle {
  readonly name = 'schedule_catch_up';
  private readonly schedules = new Map<string, Tracked>();
  private readonly states = new Map<string, string>();

  onEvent(event: SimEvent): void {
    if (event.type === 'write') {
      if (event.after.scheduleId !== null) this.states.set(event.after.id, event.after.state);
      return;
    }
    if (event.type !== 'call' || event.error !== null || !event.result) return;
    if (event.op === 'scheduleUpsert') this.define((event.result as { schedule: Schedule }).schedule);
    if (event.op === 'scheduleMintDue') this.judge(event.at, event.result as Pick<MintResult, 'minted' | 'skipped'>);
  }

  override finish(end: RunEnd): void {
    for (const schedule of end.schedules ?? []) {
      const t = this.schedules.get(schedule.id);
      if (!t || t.firstFireAt === null || schedule.nextFireAt === null) continue;
      if (schedule.skippedTicks !== t.skipped) this.flag(`schedule ${schedule.id} stored ${schedule.skippedTicks} skipped ticks, but its passes reported ${t.skipped}`);
      const accounted = t.minted + t.skipped;
      const ticks = ticksBetween(t.recurrence, t.firstFireAt, schedule.nextFireAt.getTime(), accounted + 1);
      if (t.lowerBound ? ticks < accounted : ticks !== accounted) {
        this.flag(`schedule ${schedule.id} had ${ticks} ticks before ${schedule.nextFireAt.toISOString()}, but minted ${t.minted} and skipped ${t.skipped}${t.lowerBound ? ' (at least)' : ''}`);
      }
    }
  }

  private define(schedule: Schedule): void {
    const r = schedule.recurrence;
    this.schedules.set(schedule.id, {
      recurrence: r.kind === 'cron' ? { kind: 'cron', cron: r.cron, timezone: r.timezone } : { kind: 'interval', intervalMs: r.everyMs, anchorAt: r.anchorAt.getTime() },
      catchUp: schedule.catchUp,
      noOverlap: schedule.noOverlap,
      graceMs: schedule.misfireGraceMs,
      firstFireAt: schedule.nextFireAt?.getTime() ?? null,
      minted: 0,
      skipped: 0,
      lowerBound: false,
      lastJobId: null,
    });
  }

  private judge(at: number, result: Pick<MintResult, 'minted' | 'skipped'>): void {
    const bySchedule = new Map<string, MintResult['minted'][number][]>();
    for (const m of result.minted) bySchedule.set(m.scheduleId, [...(bySchedule.get(m.scheduleId) ?? []), m]);
    for (const [id, minted] of bySchedule) {
      const t = this.schedules.get(id);
      if (!t) {
        this.flag(`a pass minted for schedule ${id}, which was never created`);
        continue;
      }
      const ticks = minted.map((m) => m.scheduledFor.getTime());
      for (const tick of ticks) {
        if (tick > at) this.flag(`schedule ${id} minted ${tick} at ${at}, before its time`);
        if (at - tick <= t.graceMs) continue;
        if (t.catchUp === 'skip') this.flag(`schedule ${id} (skip) minted ${tick} at ${at}, ${at - tick} ms late, past its ${t.graceMs} ms grace`);
        else if (ticks.length !== 1 || (nextFireAfter(t.recurrence, tick) ?? Infinity) <= at) {
          this.flag(`schedule ${id} (coalesce) minted the missed tick ${tick} at ${at}, which is not one make-up job at the latest due tick`);
        }
      }
      if (t.noOverlap) {
        if (ticks.length > 1) this.flag(`schedule ${id} (noOverlap) minted ${ticks.length} jobs in one pass`);
        const previous = t.lastJobId === null ? undefined : this.states.get(t.lastJobId);
        if (previous !== undefined && !TERMINAL.has(previous)) this.flag(`schedule ${id} (noOverlap) minted while ${t.lastJobId} was ${previous}`);
      }
      t.minted += ticks.length;
      t.lastJobId = minted.at(-1)!.jobId;
    }
    for (const skip of result.skipped) {
      const t = this.schedules.get(skip.scheduleId);
      if (!t) continue;
      t.skipped += skip.count;
      if (skip.lowerBound) t.lowerBound = true;
    }
  }
}

/** Ticks in [from, to): by arithmetic for an interval, else stepped through, at most `limit`. */
function ticksBetween(recurrence: Recurrence, from: number, to: number, limit: number): number {
  if (recurrence.kind === 'interval') return Math.max(0, Math.ceil((to - from) / recurrence.intervalMs));
  let count = 0;
  for (let tick: number | null = from; tick !== null && tick < to && count < limit; tick = nextFireAfter(recurrence, tick)) count += 1;
  return count;
}
