import { expect, it } from '@jest/globals';
import { MINT_PLAN_MAX_MINTS, OccurrenceId } from '../../../core/index.js';
import { MINT_PASS_WORK, type JobStore, type MintResult } from '../../../store/index.js';
import type { SuiteContext } from '../harness.js';

const SECOND = 1_000;
const MINUTE = 60 * SECOND;
const TEN_YEARS = 10 * 365 * 24 * 60 * MINUTE;

/** Mint passes until nothing is due any more, failing past `most` passes. */
async function mintUntilCaughtUp(store: JobStore, most: number): Promise<MintResult[]> {
  const passes: MintResult[] = [];
  for (;;) {
    const pass = await store.scheduleMintDue({ limit: 10 });
    passes.push(pass);
    if (pass.nextDueAt === null || pass.nextDueAt > pass.now) return passes;
    if (passes.length >= most) throw new Error(`still due after ${most} mint passes`);
  }
}

export function scheduleOutageCases(ctx: SuiteContext): void {
  it('issue 19 item 1: after ten years down, a per-second cron mints its whole grace window in bounded passes, exactly once each', async () => {
    const h = await ctx.open();
    const graceMs = 20 * MINUTE;
    const { schedule } = await h.store.scheduleUpsert({ schedule: { name: 'outage.cron', cron: '* * * * * *', misfireGraceMs: graceMs } });
    await h.advance(TEN_YEARS);

    const passes = await mintUntilCaughtUp(h.store, 5);
    // 1,200 ticks are within the grace: one plan mints 1,000, the next pass the rest.
    expect(passes).toHaveLength(2);
    const [first, second] = passes as [MintResult, MintResult];
    expect(first.minted).toHaveLength(MINT_PLAN_MAX_MINTS);
    expect(first.skipped).toEqual([{ scheduleId: schedule.id, count: 1_001, reason: 'missed', lowerBound: true }]);
    expect(second.skipped).toEqual([]);

    const ticks = passes.flatMap((p) => p.minted.map((m) => m.scheduledFor.getTime()));
    const oldest = Math.ceil((first.now.getTime() - graceMs) / SECOND) * SECOND;
    const newest = Math.floor(second.now.getTime() / SECOND) * SECOND;
    expect(ticks).toEqual(Array.from({ length: (newest - oldest) / SECOND + 1 }, (_, i) => oldest + i * SECOND));
    expect(passes.flatMap((p) => p.minted).every((m) => m.created && m.jobId === OccurrenceId.derive(schedule.id, m.scheduledFor))).toBe(true);
    expect(await h.countJobs()).toBe(ticks.length);
    const after = await h.store.scheduleGet({ scheduleId: schedule.id });
    expect(after).toMatchObject({ state: 'active', skippedTicks: first.skipped[0]!.count, lastSkipReason: 'missed', lastJobId: passes[1]!.minted.at(-1)!.jobId });
    expect(after!.lastSkippedFor!.getTime()).toBe(oldest - SECOND);
    expect(after!.nextFireAt!.getTime()).toBe(newest + SECOND);
  }, 60_000);

  it('issue 19 item 1: after ten years down, coalesce mints one make-up job and noOverlap one job, and both count every missed second', async () => {
    const h = await ctx.open();
    const coalesce = (await h.store.scheduleUpsert({ schedule: { name: 'outage.coalesce', everyMs: SECOND, catchUp: 'coalesce' } })).schedule;
    const single = (await h.store.scheduleUpsert({ schedule: { name: 'outage.single', everyMs: SECOND, noOverlap: true } })).schedule;
    await h.advance(TEN_YEARS);
    const stored = new Map((await h.store.scheduleList()).map((s) => [s.id, s.nextFireAt!.getTime()]));

    const [pass, ...rest] = await mintUntilCaughtUp(h.store, 3);
    expect(rest).toEqual([]);
    const now = pass!.now.getTime();
    for (const s of [coalesce, single]) {
      const firstDue = stored.get(s.id)!;
      const due = Math.floor((now - firstDue) / SECOND) + 1;
      const latest = firstDue + (due - 1) * SECOND;
      expect(pass!.minted.filter((m) => m.scheduleId === s.id).map((m) => m.scheduledFor.getTime())).toEqual([latest]);
      // Every tick but the one minted is counted, exactly: intervals are counted arithmetically.
      const reason = s.id === coalesce.id ? 'missed' : 'overlap';
      expect(pass!.skipped.filter((k) => k.scheduleId === s.id)).toEqual([{ scheduleId: s.id, count: due - 1, reason }]);
      expect(await h.store.scheduleGet({ scheduleId: s.id })).toMatchObject({ skippedTicks: due - 1, lastSkipReason: reason });
    }
    expect(await h.countJobs()).toBe(2);
  }, 60_000);

  it('issue 19 item 1: a pass that has spent its work leaves the other due schedules to the next pass, and each is caught up once', async () => {
    const h = await ctx.open();
    const ids: string[] = [];
    for (const name of ['outage.a', 'outage.b', 'outage.c']) {
      ids.push((await h.store.scheduleUpsert({ schedule: { name, cron: '* * * * * *', misfireGraceMs: 20 * MINUTE } })).schedule.id);
    }
    await h.advance(TEN_YEARS);
    const passes = await mintUntilCaughtUp(h.store, 8);
    // Counting a decade of missed seconds and minting 1,000 of the 1,200 in the grace spends a
    // pass's work: the first passes take one schedule each.
    for (const pass of passes.slice(0, 3)) {
      expect(new Set([...pass.minted, ...pass.skipped].map((m) => m.scheduleId)).size).toBe(1);
      expect(pass.minted.length).toBeLessThanOrEqual(MINT_PASS_WORK);
    }
    for (const id of ids) {
      const minted = passes.flatMap((p) => p.minted.filter((m) => m.scheduleId === id).map((m) => m.scheduledFor.getTime()));
      expect(minted.length).toBeGreaterThanOrEqual(1_200);
      expect(minted.every((t, i) => i === 0 || t === minted[i - 1]! + SECOND)).toBe(true);
      expect(passes.flatMap((p) => p.skipped.filter((s) => s.scheduleId === id))).toEqual([{ scheduleId: id, count: 1_001, reason: 'missed', lowerBound: true }]);
    }
    expect(await h.countJobs()).toBe(passes.reduce((n, p) => n + p.minted.length, 0));
  }, 60_000);
}
