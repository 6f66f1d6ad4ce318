import { afterEach, describe, expect, it } from '@jest/globals';
import type { INestApplicationContext } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { Job, SCHEDULER_STORE, SchedulerClient, type JobContext, type JobHandler, type JobStore } from '../../lib/index.js';
import { SchedulerTester, SchedulerTestingModule } from '../../lib/testing/index.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const YEAR = 365 * DAY;

/** When each attempt ran, by the kit's clock, and the tick it was minted for (if any). */
const runs: { name: string; at: number; scheduledFor: number }[] = [];

@Job({ name: 'later.report', transaction: false })
class LaterReport implements JobHandler {
  constructor(private readonly tester: SchedulerTester) {}
  async handle(_payload: unknown, ctx: JobContext) {
    runs.push({ name: 'later.report', at: this.tester.now().getTime(), scheduledFor: ctx.scheduledFor.getTime() });
  }
}

@Job({ name: 'hourly.tick', transaction: false })
class HourlyTick implements JobHandler {
  constructor(private readonly tester: SchedulerTester) {}
  async handle(_payload: unknown, ctx: JobContext) {
    runs.push({ name: 'hourly.tick', at: this.tester.now().getTime(), scheduledFor: ctx.scheduledFor.getTime() });
  }
}

describe('drain({ advanceTime: true }) across long gaps', () => {
  let app: INestApplicationContext | undefined;

  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  /** Boots the kit and counts the worker's claim passes: what stepping through time costs. */
  async function boot() {
    runs.length = 0;
    const moduleRef = await Test.createTestingModule({ imports: [SchedulerTestingModule.forRoot()], providers: [LaterReport, HourlyTick] }).compile();
    app = await moduleRef.init();
    const store = app.get<JobStore>(SCHEDULER_STORE);
    const claims = { count: 0 };
    const claim = store.jobClaim.bind(store);
    store.jobClaim = (params) => {
      claims.count += 1;
      return claim(params);
    };
    return { client: app.get(SchedulerClient), tester: app.get(SchedulerTester), claims };
  }

  /** The claim passes one drain takes to run a job `delayMs` ahead. */
  async function claimsToReach(delayMs: number): Promise<number> {
    const { client, tester, claims } = await boot();
    await client.enqueue('later.report', {}, { delayMs });
    claims.count = 0;
    expect(await tester.drain({ advanceTime: true })).toMatchObject({ attempts: 1, succeeded: 1, advancedMs: delayMs, waiting: 0 });
    const count = claims.count;
    await app!.close();
    app = undefined;
    return count;
  }

  // Bounded in real time: stepping a year of 1 s polls never ends; a jump takes milliseconds.
  it('issue 35 item 13: runs a job a year ahead, at its run time', async () => {
    const { client, tester } = await boot();
    const start = tester.now().getTime();
    await client.enqueue('later.report', {}, { delayMs: YEAR });
    expect(await tester.drain({ advanceTime: true })).toMatchObject({ attempts: 1, succeeded: 1, advancedMs: YEAR, waiting: 0 });
    expect(runs).toEqual([{ name: 'later.report', at: start + YEAR, scheduledFor: start + YEAR }]);
  }, 20_000);

  it('issue 35 item 13: a drain across 3 days takes as many worker claim passes as one across 1 day', async () => {
    const oneDay = await claimsToReach(DAY);
    const threeDays = await claimsToReach(3 * DAY);
    expect(threeDays).toBe(oneDay);
    // A handful: the passes at the start and at the run time, not one per poll interval on the way.
    expect(oneDay).toBeLessThan(10);
  }, 60_000);

  it('stops at every schedule tick on the way to a job, so each occurrence is minted and runs on time', async () => {
    const { client, tester } = await boot();
    const start = tester.now().getTime();
    await client.schedule({ name: 'hourly.tick', everyMs: HOUR });
    await client.enqueue('later.report', {}, { delayMs: 5 * HOUR + HOUR / 2 });
    expect(await tester.drain({ advanceTime: true })).toMatchObject({ attempts: 6, succeeded: 6, waiting: 0, advancedMs: 5 * HOUR + HOUR / 2 });
    const ticks = [1, 2, 3, 4, 5].map((n) => start + n * HOUR);
    expect(runs).toEqual([
      ...ticks.map((at) => ({ name: 'hourly.tick', at, scheduledFor: at })),
      { name: 'later.report', at: start + 5 * HOUR + HOUR / 2, scheduledFor: start + 5 * HOUR + HOUR / 2 },
    ]);
    // The schedule alone does not keep the drain going: its next tick is not chased.
    expect(await client.getSchedule((await client.listSchedules())[0]!.id)).toMatchObject({ nextFireAt: new Date(start + 6 * HOUR) });
  });
});
