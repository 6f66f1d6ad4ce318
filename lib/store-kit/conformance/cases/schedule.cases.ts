import { expect, it } from '@jest/globals';
import { IllegalTransitionError, InvalidArgumentError, nextFireAfter, OccurrenceId, ScheduleNotFoundError } from '../../../core/index.js';
import type { JobStore, ScheduleInput } from '../../../store/index.js';
import type { SuiteContext } from '../harness.js';
import { LEASE_MS, mustGet } from './helpers.js';

const MINUTE = 60_000;
const every = (overrides: Partial<ScheduleInput> = {}): ScheduleInput => ({ name: 'report.build', payload: { kind: 'daily' }, everyMs: MINUTE, ...overrides });

async function runAndFinish(store: JobStore, jobId: string, kind: 'succeeded' | 'dead_lettered' | 'quarantined' | 'cancelled' = 'succeeded') {
  if (kind === 'cancelled') {
    await store.jobCancel({ jobId });
    return;
  }
  const [job] = await store.jobClaim({ workerId: 'w', limit: 1, queues: ['default'], leaseMs: LEASE_MS });
  expect(job?.id).toBe(jobId);
  const outcome =
    kind === 'succeeded'
      ? { kind, jobId, attempt: job!.attempt }
      : kind === 'quarantined'
        ? { kind, jobId, attempt: job!.attempt, reason: 'bad payload' }
        : { kind, jobId, attempt: job!.attempt, error: 'broken for good' };
  await store.jobCompleteMany({ workerId: 'w', outcomes: [outcome as never] });
}

export function scheduleCases(ctx: SuiteContext): void {
  it('creates a schedule whose first tick comes from the store clock, and upserts idempotently', async () => {
    const { store } = await ctx.open();
    const created = await store.scheduleUpsert({ schedule: every({ catchUp: 'coalesce' }) });
    expect(created).toMatchObject({ created: true, changed: true });
    const s = created.schedule;
    expect(s).toMatchObject({ name: 'report.build', queue: 'default', payload: { kind: 'daily' }, state: 'active', catchUp: 'coalesce', noOverlap: false, skippedTicks: 0 });
    expect(s.recurrence).toMatchObject({ kind: 'interval', everyMs: MINUTE });
    expect(s.nextFireAt!.getTime() - s.createdAt.getTime()).toBe(MINUTE);

    const again = await store.scheduleUpsert({ schedule: every({ id: s.id, catchUp: 'coalesce' }) });
    expect(again).toMatchObject({ created: false, changed: false });
    const changed = await store.scheduleUpsert({ schedule: every({ id: s.id, payload: { kind: 'weekly' } }) });
    expect(changed).toMatchObject({ created: false, changed: true });
    expect(changed.schedule).toMatchObject({ payload: { kind: 'weekly' }, catchUp: 'skip' });
    expect(await store.scheduleList()).toHaveLength(1);
    expect(await store.scheduleGet({ scheduleId: s.id })).toEqual(changed.schedule);
  });

  it('computes cron ticks in the schedule\'s time zone', async () => {
    const { store } = await ctx.open();
    const { schedule } = await store.scheduleUpsert({ schedule: { name: 'tz.job', cron: '30 9 * * *', timezone: 'America/New_York' } });
    expect(schedule.recurrence).toEqual({ kind: 'cron', cron: '30 9 * * *', timezone: 'America/New_York' });
    const expected = nextFireAfter({ kind: 'cron', cron: '30 9 * * *', timezone: 'America/New_York' }, schedule.createdAt.getTime());
    expect(schedule.nextFireAt!.getTime()).toBe(expected);
  });

  it('mints one job per due tick, whose id is the occurrence id, and nothing before the next tick', async () => {
    const h = await ctx.open();
    const { schedule } = await h.store.scheduleUpsert({ schedule: every({ maxAttempts: 4, queue: 'reports' }) });
    expect((await h.store.scheduleMintDue({ limit: 10 })).minted).toEqual([]);
    await h.advance(MINUTE);
    const pass = await h.store.scheduleMintDue({ limit: 10 });
    expect(pass.minted).toHaveLength(1);
    const [minted] = pass.minted;
    expect(minted!.jobId).toBe(OccurrenceId.derive(schedule.id, minted!.scheduledFor));
    expect(minted!.created).toBe(true);
    const job = await mustGet(h.store, minted!.jobId);
    expect(job).toMatchObject({ name: 'report.build', queue: 'reports', payload: { kind: 'daily' }, maxAttempts: 4, state: 'scheduled', scheduleId: schedule.id, occurrenceId: minted!.jobId });
    expect(job.scheduledFor.getTime()).toBe(minted!.scheduledFor.getTime());
    expect(job.runAt.getTime()).toBe(minted!.scheduledFor.getTime());
    expect(pass.nextDueAt!.getTime() - minted!.scheduledFor.getTime()).toBe(MINUTE);
    expect((await h.store.scheduleMintDue({ limit: 10 })).minted).toEqual([]);
    expect(await h.store.scheduleGet({ scheduleId: schedule.id })).toMatchObject({ lastJobId: job.id });
  });

  it('mints each occurrence once when several minters run at the same moment', async () => {
    const h = await ctx.open();
    await h.store.scheduleUpsert({ schedule: every({ name: 'a' }) });
    await h.store.scheduleUpsert({ schedule: every({ name: 'b' }) });
    await h.advance(MINUTE);
    const passes = await Promise.all([1, 2, 3, 4].map(() => h.store.scheduleMintDue({ limit: 10 })));
    const created = passes.flatMap((p) => p.minted.filter((m) => m.created));
    expect(created).toHaveLength(2);
    expect(await h.countJobs()).toBe(2);
  });

  it('skips ticks missed during downtime and records them; coalesce runs them as one make-up job', async () => {
    const h = await ctx.open();
    const skip = (await h.store.scheduleUpsert({ schedule: every({ name: 'skipper', misfireGraceMs: 30_000 }) })).schedule;
    const coalesce = (await h.store.scheduleUpsert({ schedule: every({ name: 'coalescer', catchUp: 'coalesce', misfireGraceMs: 30_000 }) })).schedule;
    await h.advance(10 * MINUTE + 45_000); // ten ticks, the latest 45 s ago: all beyond the grace
    const pass = await h.store.scheduleMintDue({ limit: 10 });
    expect(pass.minted.filter((m) => m.scheduleId === skip.id)).toEqual([]);
    expect(pass.minted.filter((m) => m.scheduleId === coalesce.id)).toHaveLength(1);
    expect(pass.skipped).toEqual(
      expect.arrayContaining([
        { scheduleId: skip.id, count: 10, reason: 'missed' },
        { scheduleId: coalesce.id, count: 9, reason: 'missed' },
      ]),
    );
    expect(await h.store.scheduleGet({ scheduleId: skip.id })).toMatchObject({ skippedTicks: 10, lastSkipReason: 'missed', lastJobId: null });
    const afterSkip = await h.store.scheduleGet({ scheduleId: skip.id });
    expect(afterSkip!.nextFireAt!.getTime()).toBeGreaterThan(afterSkip!.updatedAt.getTime());
  });

  it('with noOverlap, mints nothing while the previous occurrence is unfinished, and records the skipped tick', async () => {
    const h = await ctx.open();
    const { schedule } = await h.store.scheduleUpsert({ schedule: every({ noOverlap: true }) });
    await h.advance(MINUTE);
    const [first] = (await h.store.scheduleMintDue({ limit: 10 })).minted;
    await h.store.jobClaim({ workerId: 'w', limit: 1, queues: ['default'], leaseMs: 10 * MINUTE });
    await h.advance(MINUTE);
    const blocked = await h.store.scheduleMintDue({ limit: 10 });
    expect(blocked.minted).toEqual([]);
    expect(blocked.skipped).toEqual([{ scheduleId: schedule.id, count: 1, reason: 'overlap' }]);
    expect(await h.store.scheduleGet({ scheduleId: schedule.id })).toMatchObject({ skippedTicks: 1, lastSkipReason: 'overlap', lastJobId: first!.jobId });
    await h.store.jobCompleteMany({ workerId: 'w', outcomes: [{ jobId: first!.jobId, attempt: 1, kind: 'succeeded' }] });
    await h.advance(MINUTE);
    expect((await h.store.scheduleMintDue({ limit: 10 })).minted).toHaveLength(1);
  });

  it('stops minting when an occurrence is dead-lettered, until the schedule is replayed', async () => {
    const h = await ctx.open();
    const { schedule } = await h.store.scheduleUpsert({ schedule: every({ maxAttempts: 1 }) });
    await h.advance(MINUTE);
    const [occurrence] = (await h.store.scheduleMintDue({ limit: 10 })).minted;
    await runAndFinish(h.store, occurrence!.jobId, 'dead_lettered');
    expect(await h.store.scheduleGet({ scheduleId: schedule.id })).toMatchObject({ state: 'dead_lettered', haltedJobId: occurrence!.jobId });
    await h.advance(MINUTE);
    expect((await h.store.scheduleMintDue({ limit: 10 })).minted).toEqual([]);
    await expect(h.store.schedulePause({ scheduleId: schedule.id })).rejects.toThrow(`Schedule ${schedule.id} is dead-lettered; replay it to bring it back.`);

    const { schedule: replayed, job } = await h.store.scheduleReplay({ scheduleId: schedule.id, actor: 'cli:ops' });
    expect(replayed).toMatchObject({ state: 'active', haltedJobId: null });
    expect(job).toMatchObject({ id: occurrence!.jobId, state: 'scheduled', attempt: 0, lastError: null });
    expect(job!.runAt.getTime()).toBe(job!.updatedAt.getTime());
    await expect(h.store.scheduleReplay({ scheduleId: schedule.id })).rejects.toBeInstanceOf(IllegalTransitionError);
    const audit = await h.store.auditList({ limit: 5 });
    expect(audit[0]).toMatchObject({ actor: 'cli:ops', action: 'schedule.replay', target: schedule.id });
  });

  it('also stops on a quarantined occurrence, and comes back when that occurrence is replayed by job id', async () => {
    const h = await ctx.open();
    const { schedule } = await h.store.scheduleUpsert({ schedule: every() });
    await h.advance(MINUTE);
    const [occurrence] = (await h.store.scheduleMintDue({ limit: 10 })).minted;
    await runAndFinish(h.store, occurrence!.jobId, 'quarantined');
    expect((await h.store.scheduleGet({ scheduleId: schedule.id }))?.state).toBe('dead_lettered');
    await h.store.jobReplay({ jobId: occurrence!.jobId });
    expect(await h.store.scheduleGet({ scheduleId: schedule.id })).toMatchObject({ state: 'active', haltedJobId: null });
  });

  it('keeps minting after a cancelled occurrence', async () => {
    const h = await ctx.open();
    const { schedule } = await h.store.scheduleUpsert({ schedule: every() });
    await h.advance(MINUTE);
    const [occurrence] = (await h.store.scheduleMintDue({ limit: 10 })).minted;
    await runAndFinish(h.store, occurrence!.jobId, 'cancelled');
    expect((await h.store.scheduleGet({ scheduleId: schedule.id }))?.state).toBe('active');
    await h.advance(MINUTE);
    expect((await h.store.scheduleMintDue({ limit: 10 })).minted).toHaveLength(1);
  });

  it('pauses and resumes without backfilling past the catch-up policy', async () => {
    const h = await ctx.open();
    const { schedule } = await h.store.scheduleUpsert({ schedule: every({ misfireGraceMs: 10_000 }) });
    expect((await h.store.schedulePause({ scheduleId: schedule.id })).state).toBe('paused');
    expect((await h.store.schedulePause({ scheduleId: schedule.id })).state).toBe('paused');
    await h.advance(5 * MINUTE + 30_000);
    expect((await h.store.scheduleMintDue({ limit: 10 })).minted).toEqual([]);
    expect((await h.store.scheduleResume({ scheduleId: schedule.id })).state).toBe('active');
    const pass = await h.store.scheduleMintDue({ limit: 10 });
    expect(pass.minted).toEqual([]);
    expect(pass.skipped).toEqual([{ scheduleId: schedule.id, count: 5, reason: 'missed' }]);
  });

  it('triggers an extra occurrence now without moving the next tick, and removes a schedule but not its jobs', async () => {
    const h = await ctx.open();
    const { schedule } = await h.store.scheduleUpsert({ schedule: every() });
    const triggered = await h.store.scheduleTrigger({ scheduleId: schedule.id, actor: 'cli:ops' });
    expect(triggered.created).toBe(true);
    const job = await mustGet(h.store, triggered.id);
    expect(job).toMatchObject({ scheduleId: schedule.id, state: 'scheduled', occurrenceId: triggered.id });
    expect(triggered.id).toBe(OccurrenceId.derive(schedule.id, job.scheduledFor));
    expect((await h.store.scheduleGet({ scheduleId: schedule.id }))!.nextFireAt).toEqual(schedule.nextFireAt);

    expect(await h.store.scheduleRemove({ scheduleId: schedule.id })).toBe(true);
    expect(await h.store.scheduleRemove({ scheduleId: schedule.id })).toBe(false);
    expect(await h.store.scheduleGet({ scheduleId: schedule.id })).toBeNull();
    expect(await h.store.jobGet({ jobId: triggered.id })).not.toBeNull();
    await expect(h.store.scheduleTrigger({ scheduleId: schedule.id })).rejects.toBeInstanceOf(ScheduleNotFoundError);
    expect((await h.store.auditList()).map((a) => a.action)).toEqual(['schedule.remove', 'schedule.trigger', 'schedule.create']);
  });

  it.each<[string, Partial<ScheduleInput>, RegExp]>([
    ['a bad cron pattern', { everyMs: undefined, cron: '61 * * * *' }, /^cron "61 \* \* \* \*" is not a valid cron pattern/],
    ['an unknown time zone', { everyMs: undefined, cron: '* * * * *', timezone: 'Mars/Olympus' }, /^timezone must be an IANA time zone/],
    ['both cron and everyMs', { cron: '* * * * *' }, /^A schedule needs exactly one of cron or everyMs\.$/],
    ['neither cron nor everyMs', { everyMs: undefined }, /^A schedule needs exactly one of cron or everyMs\.$/],
    ['an interval under a second', { everyMs: 500 }, /^everyMs must be at least 1000/],
    ['a NaN interval', { everyMs: Number.NaN }, /^everyMs must be a whole number/],
    ['an unknown catch-up policy', { catchUp: 'all' as never }, /^catchUp must be "skip" or "coalesce"/],
    ['a hostile name', { name: "x'; drop table y" }, /^name must be 1 to 128 characters/],
    ['a payload that is not JSON', { payload: { n: 1n } }, /BigInt/],
  ])('refuses %s before writing anything', async (_label, overrides, pattern) => {
    const h = await ctx.open();
    const before = await h.snapshot();
    const error = await h.store.scheduleUpsert({ schedule: every(overrides) }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect((error as Error).message).toMatch(pattern);
    expect(await h.snapshot()).toEqual(before);
  });
}
