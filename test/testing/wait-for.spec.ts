import { afterEach, describe, expect, it } from '@jest/globals';
import type { INestApplicationContext } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { Job, JobFailedError, JobNotFoundError, JobWaitTimeoutError, SchedulerClient, type JobHandler } from '../../lib/index.js';
import { SchedulerTester, SchedulerTestingModule } from '../../lib/testing/index.js';
import { track, turns } from '../support/settling.js';

const MISSING = '0190a5a0-0000-7000-8000-00000000f00d';

@Job({ name: 'quote.price', transaction: false })
class QuotePrice implements JobHandler<{ items: number }> {
  async handle({ items }: { items: number }, ctx: { setOutput(output: unknown): void }) {
    ctx.setOutput({ total: items * 3 });
  }
}

@Job({ name: 'mail.ping', transaction: false })
class MailPing implements JobHandler<{ to: string }> {
  async handle() {}
}

describe('waitFor under the testing kit', () => {
  let app: INestApplicationContext | undefined;

  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  async function boot() {
    const moduleRef = await Test.createTestingModule({ imports: [SchedulerTestingModule.forRoot()], providers: [QuotePrice] }).compile();
    app = await moduleRef.init();
    return { client: app.get(SchedulerClient), tester: app.get(SchedulerTester) };
  }

  it('issue 36 item 4: under finish lean, a wait on a job its drain deletes with its success resolves, and the job then reads as unknown', async () => {
    const moduleRef = await Test.createTestingModule({ imports: [SchedulerTestingModule.forRoot({ finish: 'lean' })], providers: [QuotePrice, MailPing] }).compile();
    app = await moduleRef.init();
    const client = app.get(SchedulerClient);
    const tester = app.get(SchedulerTester);
    const { id } = await client.enqueue('mail.ping', { to: 'ops' });
    const { id: priced } = await client.enqueue('quote.price', { items: 2 });
    const wait = track(client.waitFor(id));
    await turns();
    expect(wait.settled).toBe(false);
    await tester.drain();
    expect(wait).toMatchObject({ settled: true, value: { jobId: id, state: 'succeeded', output: null, attempt: 1, finishedAt: null } });
    expect(await client.get(id)).toBeNull();
    expect(await client.history(id)).toEqual([]);
    // A job with output is kept, as under keep.
    expect(await client.get(priced)).toMatchObject({ state: 'succeeded', output: { total: 6 } });
  });

  it('issue 35 item 14: rejects a wait on an unknown id at once with JobNotFoundError, before the test moves the clock', async () => {
    const { client } = await boot();
    const wait = track(client.waitFor(MISSING));
    await turns();
    expect(wait.settled).toBe(true);
    expect(wait.error).toBeInstanceOf(JobNotFoundError);
  });

  it('issue 35 item 14: settles a wait on a job that already finished at once', async () => {
    const { client, tester } = await boot();
    const { id } = await client.enqueue('quote.price', { items: 2 });
    await tester.drain();
    const wait = track(client.waitFor(id, { timeoutMs: 200 }));
    await turns();
    expect(wait).toMatchObject({ settled: true, value: { jobId: id, state: 'succeeded', output: { total: 6 }, attempt: 1 } });
  });

  it('has settled a wait by the time the drain that finished its job resolves, or the drain after a cancel', async () => {
    const { client, tester } = await boot();
    const { id } = await client.enqueue('quote.price', { items: 4 });
    const done = track(client.waitFor(id));
    await tester.drain();
    expect(done).toMatchObject({ settled: true, value: { state: 'succeeded', output: { total: 12 } } });

    const later = await client.enqueue('quote.price', { items: 1 }, { delayMs: 60_000 });
    const cancelled = track(client.waitFor(later.id));
    // Read once already: the cancel gives no hint, and the next poll waits for the kit's clock.
    await turns();
    expect(cancelled.settled).toBe(false);
    await client.cancel(later.id);
    await tester.drain();
    expect(cancelled.settled).toBe(true);
    expect(cancelled.error).toBeInstanceOf(JobFailedError);
    expect(cancelled.error).toMatchObject({ state: 'cancelled' });
  });

  it("times a wait out on the kit's clock: not before the test moves it that far, and at once when it does", async () => {
    const { client, tester } = await boot();
    const { id } = await client.enqueue('quote.price', { items: 1 }, { delayMs: 60_000 });
    const wait = track(client.waitFor(id, { timeoutMs: 200 }));
    await turns();
    expect(wait.settled).toBe(false);
    await tester.advance(199);
    expect(wait.settled).toBe(false);
    await tester.advance(1);
    expect(wait.error).toBeInstanceOf(JobWaitTimeoutError);
    expect(await client.get(id)).toMatchObject({ state: 'scheduled' });
  });

  it("times a wait out at its instant when drain's clock jumps past it to the job", async () => {
    const { client, tester } = await boot();
    const { id } = await client.enqueue('quote.price', { items: 1 }, { delayMs: 3_600_000 });
    const early = track(client.waitFor(id, { timeoutMs: 60_000 }));
    const patient = track(client.waitFor(id, { timeoutMs: 7_200_000 }));
    expect(await tester.drain({ advanceTime: true })).toMatchObject({ succeeded: 1, advancedMs: 3_600_000 });
    expect(early.error).toBeInstanceOf(JobWaitTimeoutError);
    expect(patient).toMatchObject({ settled: true, value: { state: 'succeeded', output: { total: 3 } } });
  });
});
