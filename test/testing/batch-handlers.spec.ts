import { afterEach, describe, expect, it } from '@jest/globals';
import type { INestApplicationContext } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { Job, SchedulerClient, type BatchContext, type BatchJob, type BatchJobHandler } from '../../lib/index.js';
import { SchedulerTester, SchedulerTestingModule, type SchedulerTestingOptions } from '../../lib/testing/index.js';

/** The payloads of each call, in call order. */
const calls: number[][] = [];

@Job({ name: 'kit.index', batch: { size: 3, waitMs: 5_000 } })
class IndexDocs implements BatchJobHandler<{ n: number }> {
  async handle(jobs: readonly BatchJob<{ n: number }>[], context: BatchContext) {
    expect(context.size).toBe(jobs.length);
    calls.push(jobs.map((job) => job.payload.n));
  }
}

describe('the testing kit runs batch handlers', () => {
  let app: INestApplicationContext | undefined;

  async function boot(options: SchedulerTestingOptions = {}) {
    calls.length = 0;
    const moduleRef = await Test.createTestingModule({ imports: [SchedulerTestingModule.forRoot(options)], providers: [IndexDocs] }).compile();
    app = await moduleRef.init();
    return { client: app.get(SchedulerClient), tester: app.get(SchedulerTester) };
  }

  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  it('drains a batch that would wait 5 s to fill without moving the clock', async () => {
    const { client, tester } = await boot();
    await client.enqueueMany([1, 2, 3, 4, 5].map((n) => ({ name: 'kit.index', payload: { n } })));
    const summary = await tester.drain();
    expect(summary).toMatchObject({ attempts: 5, succeeded: 5, advancedMs: 0, waiting: 0 });
    // A full batch starts at once; the two left over start when the drain finds nothing else to do.
    expect(calls).toEqual([[1, 2, 3], [4, 5]]);
    expect((await tester.enqueued('kit.index')).map((job) => job.state)).toEqual(Array(5).fill('succeeded'));
  });

  it('drains with advanceTime too, and a job enqueued alone runs as a call of one', async () => {
    const { client, tester } = await boot();
    await client.enqueue('kit.index', { n: 1 });
    expect(await tester.drain({ advanceTime: true })).toMatchObject({ attempts: 1, succeeded: 1, advancedMs: 0 });
    expect(calls).toEqual([[1]]);
  });

  it('in inline mode, runs the jobs an enqueue wrote before it resolves: one job as a call of one, an enqueueMany\'s together', async () => {
    const { client, tester } = await boot({ inline: true });
    const before = tester.now().getTime();
    await client.enqueue('kit.index', { n: 7 });
    expect(calls).toEqual([[7]]);
    await client.enqueueMany([8, 9].map((n) => ({ name: 'kit.index', payload: { n } })));
    expect(calls).toEqual([[7], [8, 9]]);
    expect(tester.now().getTime()).toBe(before);
  });

  it('lets advance() start a batch once its wait is over, and not before', async () => {
    const { client, tester } = await boot();
    await client.enqueue('kit.index', { n: 1 });
    await tester.advance(4_999);
    expect(calls).toEqual([]);
    await tester.advance(1);
    expect(calls).toEqual([[1]]);
  });
});
