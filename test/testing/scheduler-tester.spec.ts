import { afterEach, describe, expect, it } from '@jest/globals';
import { Inject, Injectable, Scope, type INestApplicationContext } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { InvalidArgumentError, Job, JOB_CONTEXT, SchedulerClient, SchedulerOrchestrator, type JobContext, type JobHandler } from '../../lib/index.js';
import { DrainLimitError, ManualClock, SchedulerExpectationError, SchedulerTester, SchedulerTestingModule, type SchedulerTestingOptions } from '../../lib/testing/index.js';

const ran: string[] = [];

@Job({ name: 'kit.parent', transaction: false })
class ParentJob implements JobHandler<{ id: string }> {
  constructor(private readonly client: SchedulerClient) {}
  async handle({ id }: { id: string }) {
    ran.push(`parent ${id}`);
    await this.client.enqueue('kit.child', { id });
  }
}

@Job({ name: 'kit.child', transaction: false })
class ChildJob implements JobHandler<{ id: string }> {
  async handle({ id }: { id: string }) {
    ran.push(`child ${id}`);
  }
}

/** Fails until its third attempt, without jitter: 2 s, then 4 s. */
@Job({ name: 'kit.flaky', transaction: false, maxAttempts: 5, retry: { baseDelayMs: 1_000, jitter: false } })
class FlakyJob implements JobHandler {
  async handle(_payload: unknown, ctx: JobContext) {
    ran.push(`flaky ${ctx.attempt}`);
    if (ctx.attempt < 3) throw new Error('not yet');
  }
}

@Job({ name: 'kit.forever', transaction: false })
class ForeverJob implements JobHandler<{ n: number }> {
  constructor(private readonly client: SchedulerClient) {}
  async handle({ n }: { n: number }) {
    await this.client.enqueue('kit.forever', { n: n + 1 });
  }
}

@Injectable({ scope: Scope.REQUEST })
class AttemptScoped {
  constructor(@Inject(JOB_CONTEXT) readonly ctx: JobContext) {}
}

@Job({ name: 'kit.scoped', transaction: false })
class ScopedJob implements JobHandler {
  constructor(private readonly scoped: AttemptScoped) {}
  async handle() {
    ran.push(`scoped ${this.scoped.ctx.jobId}`);
  }
}

const HANDLERS = [ParentJob, ChildJob, FlakyJob, ForeverJob, AttemptScoped, ScopedJob];

describe('SchedulerTestingModule and SchedulerTester', () => {
  let app: INestApplicationContext | undefined;

  async function boot(options: SchedulerTestingOptions = {}) {
    ran.length = 0;
    const moduleRef = await Test.createTestingModule({ imports: [SchedulerTestingModule.forRoot(options)], providers: HANDLERS }).compile();
    app = await moduleRef.init();
    return { client: app.get(SchedulerClient), tester: app.get(SchedulerTester) };
  }

  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  it('drains a due job and the job it enqueues, and sums up what happened', async () => {
    const { client, tester } = await boot();
    await client.enqueue('kit.parent', { id: 'a' });
    const summary = await tester.drain();
    expect(ran).toEqual(['parent a', 'child a']);
    expect(summary).toEqual({ attempts: 2, succeeded: 2, retried: 0, snoozed: 0, deadLettered: 0, quarantined: 0, cancelled: 0, advancedMs: 0, waiting: 0 });
    expect((await tester.enqueued('kit.child')).map((job) => job.state)).toEqual(['succeeded']);
  });

  it('leaves a retry waiting without advanceTime, and runs it through its backoff with it', async () => {
    const { client, tester } = await boot();
    const start = tester.now().getTime();
    const { id } = await client.enqueue('kit.flaky', {});
    expect(await tester.drain()).toMatchObject({ attempts: 1, retried: 1, waiting: 1, advancedMs: 0 });
    expect(tester.now().getTime()).toBe(start);
    const summary = await tester.drain({ advanceTime: true });
    expect(summary).toMatchObject({ attempts: 2, retried: 1, succeeded: 1, waiting: 0, advancedMs: 6_000 });
    expect(ran).toEqual(['flaky 1', 'flaky 2', 'flaky 3']);
    expect(tester.now().getTime()).toBe(start + 6_000);
    expect(await client.get(id)).toMatchObject({ state: 'succeeded', attempt: 3 });
  });

  it('runs a delayed job only once the clock reaches its run time', async () => {
    const { client, tester } = await boot();
    const { id } = await client.enqueue('kit.child', { id: 'later' }, { delayMs: 60_000 });
    expect(await tester.drain()).toMatchObject({ attempts: 0, waiting: 1 });
    await tester.advance(59_999);
    await tester.drain();
    expect((await client.get(id))?.state).toBe('scheduled');
    await tester.advance(1);
    await tester.drain();
    expect(ran).toEqual(['child later']);
    expect((await client.get(id))?.state).toBe('succeeded');
  });

  it('claims a job that came due between polls: drain asks the worker for a claim pass itself', async () => {
    // An hour between polls: only drain's own claim pass can find the job once it is due.
    const { client, tester } = await boot({ pollIntervalMs: 3_600_000 });
    const { id } = await client.enqueue('kit.child', { id: 'between polls' }, { delayMs: 1_500 });
    expect(await tester.drain({ advanceTime: true })).toMatchObject({ attempts: 1, succeeded: 1, advancedMs: 1_500 });
    expect((await client.get(id))?.state).toBe('succeeded');
  });

  it('gives up on a job that enqueues itself forever, saying so', async () => {
    const { client, tester } = await boot();
    await client.enqueue('kit.forever', { n: 0 });
    const error = await tester.drain({ maxJobs: 10 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DrainLimitError);
    expect((error as DrainLimitError).message).toMatch(/^drain started 11 attempts, more than maxJobs \(10\): a job may be enqueueing itself again/);
  });

  it('runs handlers through the attempt scope, so request-scoped providers get the attempt', async () => {
    const { client, tester } = await boot();
    const { id } = await client.enqueue('kit.scoped', {});
    await tester.drain();
    expect(ran).toEqual([`scoped ${id}`]);
  });

  it('expectEnqueued matches a value, a predicate or an asymmetric matcher, and lists what it found otherwise', async () => {
    const { client, tester } = await boot();
    await client.enqueue('kit.child', { id: 'one', note: 'x'.repeat(10_000) });
    await client.enqueue('kit.child', { id: 'two' });
    expect((await tester.expectEnqueued('kit.child', { id: 'two' })).payload).toEqual({ id: 'two' });
    expect((await tester.expectEnqueued('kit.child', (p: unknown) => (p as { id: string }).id === 'one')).payload).toMatchObject({ id: 'one' });
    expect((await tester.expectEnqueued('kit.child', expect.objectContaining({ id: 'one' }))).payload).toMatchObject({ id: 'one' });
    expect((await tester.expectEnqueued('kit.child', { id: expect.any(String) })).payload).toEqual({ id: 'two' });
    const mismatch = await tester.expectEnqueued('kit.child', { id: 'three' }).catch((e: unknown) => e);
    expect(mismatch).toBeInstanceOf(SchedulerExpectationError);
    const message = (mismatch as Error).message;
    expect(message).toMatch(/^Expected a "kit\.child" job with a payload matching \{"id":"three"\} to be enqueued; the 2 "kit\.child" job\(s\) enqueued have the payloads \{"id":"one","note":"x+…, \{"id":"two"\}\.$/);
    expect(message.length).toBeLessThan(400);
    await expect(tester.expectEnqueued('kit.parent')).rejects.toThrow('Expected a "kit.parent" job to be enqueued, and there is none; enqueued were "kit.child" (2).');
  });

  it('runs a job at its enqueue in inline mode, and the jobs it enqueues', async () => {
    const { client } = await boot({ inline: true });
    await client.enqueue('kit.parent', { id: 'inline' });
    expect(ran).toEqual(['parent inline', 'child inline']);
  });

  it('arms no real timer: the worker runs on the kit\'s timers, and closing leaves nothing behind', async () => {
    const timeouts = () => process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout' || kind === 'Immediate').length;
    const before = timeouts();
    const clock = new ManualClock();
    const { client, tester } = await boot({ clock });
    await client.enqueue('kit.flaky', {});
    await tester.drain({ advanceTime: true });
    expect(timeouts()).toBe(before);
    // The node did arm its poll and heartbeat timers: on the manual clock, where they wait to be fired.
    const node = app!.get(SchedulerOrchestrator).node;
    expect(node.status).toBe('running');
    await app!.close();
    app = undefined;
    expect(node.status).toBe('stopped');
    expect(timeouts()).toBe(before);
    expect(clock.now()).toBe(Date.UTC(2030, 0, 1) + 6_000);
  });

  it('refuses bad options and calls with one sentence, before anything runs', async () => {
    expect(() => SchedulerTestingModule.forRoot({ store: 'postgres' as 'memory' })).toThrow(new InvalidArgumentError('store must be "memory" or "sqlite" (the kit builds the store, on its clock), got "postgres".', 'store'));
    expect(() => SchedulerTestingModule.forRoot({ autoStart: false } as SchedulerTestingOptions)).toThrow('SchedulerTestingModule builds its own store and worker, so it does not take the autoStart option; see docs/testing.md.');
    const { tester } = await boot();
    await expect(tester.drain({ maxJobs: 0 })).rejects.toThrow('maxJobs must be a whole number of at least 1, got 0.');
    await expect(tester.advance(-1)).rejects.toThrow('advance needs a finite, non-negative number of milliseconds, got -1.');
  });
});
