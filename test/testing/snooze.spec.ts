import { afterEach, describe, expect, it } from '@jest/globals';
import type { INestApplicationContext } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import { defineJob, InvalidArgumentError, Job, SchedulerClient, SchedulerModule, type JobContext, type JobHandler } from '../../lib/index.js';
import { MemoryJobStore, SchedulerTester, SchedulerTestingModule } from '../../lib/testing/index.js';

interface PollPayload {
  /** Snooze this many times, then succeed. */
  readonly snoozes: number;
  /** Throw on these attempts. */
  readonly failOn?: readonly number[];
}

/** When each attempt ran by the kit's clock, and what it saw. */
const runs: { attempt: number; maxAttempts: number; at: number }[] = [];

@Job({ name: 'payment.poll', maxAttempts: 2, maxSnoozes: 3, retry: { baseDelayMs: 1_000, maxDelayMs: 60_000, jitter: false } })
class PollPayment implements JobHandler<PollPayload> {
  constructor(private readonly tester: SchedulerTester) {}

  async handle(payload: PollPayload, ctx: JobContext<PollPayload>) {
    runs.push({ attempt: ctx.attempt, maxAttempts: ctx.maxAttempts, at: this.tester.now().getTime() });
    if (payload.failOn?.includes(ctx.attempt)) throw new Error(`gateway timeout on attempt ${ctx.attempt}`);
    const snoozed = runs.length - 1;
    if (snoozed < payload.snoozes) return ctx.snooze(60_000);
    return undefined;
  }
}

@Job({ name: 'snooze.then.throw', maxAttempts: 1 })
class SnoozeThenThrow implements JobHandler {
  async handle(_payload: unknown, ctx: JobContext) {
    ctx.snooze(1_000);
    throw new Error('changed its mind');
  }
}

@Job({ name: 'snooze.forbidden', maxAttempts: 3, maxSnoozes: 0 })
class SnoozeForbidden implements JobHandler {
  async handle(_payload: unknown, ctx: JobContext) {
    return ctx.snooze(1_000);
  }
}

@Job({ name: 'snooze.bad.delay', maxAttempts: 1 })
class SnoozeBadDelay implements JobHandler {
  async handle(_payload: unknown, ctx: JobContext) {
    return ctx.snooze(-5);
  }
}

describe('issue 39 item 5: ctx.snooze in a handler', () => {
  let app: INestApplicationContext | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
    runs.length = 0;
  });

  async function boot(store: 'memory' | 'sqlite' = 'sqlite') {
    const imports = store === 'sqlite' ? [TypeOrmModule.forRoot({ type: 'better-sqlite3', database: ':memory:' })] : [];
    const moduleRef = await Test.createTestingModule({
      imports: [...imports, SchedulerTestingModule.forRoot({ store })],
      providers: [PollPayment, SnoozeThenThrow, SnoozeBadDelay, SnoozeForbidden],
    }).compile();
    app = await moduleRef.init();
    return { client: app.get(SchedulerClient), tester: app.get(SchedulerTester) };
  }

  it.each(['sqlite', 'memory'] as const)('runs again after each snooze without spending attempts, then succeeds (%s store)', async (store) => {
    const { client, tester } = await boot(store);
    const start = tester.now().getTime();
    const { id } = await client.enqueue('payment.poll', { snoozes: 3 });
    expect(await tester.drain({ advanceTime: true })).toMatchObject({ attempts: 4, snoozed: 3, succeeded: 1, retried: 0, deadLettered: 0, waiting: 0 });
    expect(runs).toEqual([
      { attempt: 1, maxAttempts: 2, at: start },
      { attempt: 2, maxAttempts: 3, at: start + 60_000 },
      { attempt: 3, maxAttempts: 4, at: start + 120_000 },
      { attempt: 4, maxAttempts: 5, at: start + 180_000 },
    ]);
    expect(await client.get(id)).toMatchObject({ state: 'succeeded', attempt: 4, maxAttempts: 5, snoozes: 3 });
  });

  it('dead-letters a job that asks for one snooze more than maxSnoozes, and says why', async () => {
    const { client, tester } = await boot();
    const { id } = await client.enqueue('payment.poll', { snoozes: 10 });
    expect(await tester.drain({ advanceTime: true })).toMatchObject({ attempts: 4, snoozed: 3, deadLettered: 1, waiting: 0 });
    expect(await client.get(id)).toMatchObject({
      state: 'dead_lettered',
      attempt: 4,
      snoozes: 3,
      lastError: 'asked to snooze again after 3 snoozes, the most its handler allows (maxSnoozes 3); raise maxSnoozes, then replay the job',
    });
  });

  it('dead-letters the first snooze of a handler with maxSnoozes 0', async () => {
    const { client, tester } = await boot();
    const { id } = await client.enqueue('snooze.forbidden', {});
    expect(await tester.drain({ advanceTime: true })).toMatchObject({ attempts: 1, snoozed: 0, deadLettered: 1 });
    expect(await client.get(id)).toMatchObject({
      state: 'dead_lettered',
      attempt: 1,
      snoozes: 0,
      lastError: 'asked to snooze, which its handler does not allow (maxSnoozes 0); raise maxSnoozes, then replay the job',
    });
  });

  it('backs a failure off by the failed attempts only: snoozes do not lengthen the retry delay', async () => {
    const { client, tester } = await boot();
    await client.enqueue('payment.poll', { snoozes: 2, failOn: [3] });
    expect(await tester.drain({ advanceTime: true })).toMatchObject({ attempts: 4, snoozed: 2, retried: 1, succeeded: 1 });
    // Attempt 3 is the first failure: base 1 s doubled once, as after a first attempt, not 2^3 s.
    expect(runs[3]!.at - runs[2]!.at).toBe(2_000);
  });

  it('fails the attempt when the handler throws after asking to snooze', async () => {
    const { client, tester } = await boot();
    const { id } = await client.enqueue('snooze.then.throw', {});
    expect(await tester.drain()).toMatchObject({ attempts: 1, snoozed: 0, deadLettered: 1 });
    expect(await client.get(id)).toMatchObject({ state: 'dead_lettered', snoozes: 0, lastError: expect.stringContaining('changed its mind') });
  });

  it('fails the attempt with a typed error when the snooze delay is bad', async () => {
    const { client, tester } = await boot();
    const { id } = await client.enqueue('snooze.bad.delay', {});
    expect(await tester.drain()).toMatchObject({ attempts: 1, snoozed: 0, deadLettered: 1 });
    expect((await client.get(id))?.lastError).toMatch(/^InvalidArgumentError: ctx\.snooze delayMs must be a finite number of milliseconds at or above 0, got -5\./);
  });
});

describe('issue 39 item 5: the snooze limit\'s error', () => {
  it('counts in words, and says when the handler allows no snooze at all', async () => {
    const { snoozeLimitError } = await import('../../lib/worker/job-snooze.js');
    expect(snoozeLimitError(1, 1)).toBe('asked to snooze again after 1 snooze, the most its handler allows (maxSnoozes 1); raise maxSnoozes, then replay the job');
    expect(snoozeLimitError(0, 0)).toBe('asked to snooze, which its handler does not allow (maxSnoozes 0); raise maxSnoozes, then replay the job');
  });
});

describe('issue 39 item 5: maxSnoozes is checked at boot', () => {
  @Job({ name: 'bad.snoozes', maxSnoozes: -1 })
  class BadSnoozes implements JobHandler {
    async handle() {}
  }

  it('refuses a bad maxSnoozes, naming the class', async () => {
    const compiled = Test.createTestingModule({
      imports: [SchedulerModule.forRoot({ store: new MemoryJobStore(), autoStart: false })],
      providers: [BadSnoozes],
    }).compile();
    const error = await compiled.then((moduleRef) => moduleRef.init()).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect((error as Error).message).toMatch(/^BadSnoozes \(@Job 'bad\.snoozes'\) maxSnoozes must be a whole number from 0 to 100000, got -1\.$/);
  });

  it('keeps maxSnoozes out of a shared job definition: it belongs to the handler', () => {
    expect(() => defineJob({ name: 'shared.poll', maxSnoozes: 3 } as never)).toThrow(
      "defineJob('shared.poll') sets maxSnoozes, which belongs to the handler; pass it as @Job(definition, { maxSnoozes }).",
    );
  });
});
