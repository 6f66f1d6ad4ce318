import { afterEach, describe, expect, it } from '@jest/globals';
import type { INestApplicationContext } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import {
  BatchNotFoundError,
  BatchWaitAbortedError,
  BatchWaitTimeoutError,
  defineJob,
  InvalidArgumentError,
  Job,
  PermanentJobError,
  SchedulerClient,
  type BatchSummary,
  type JobContext,
  type JobHandler,
} from '../../lib/index.js';
import { SchedulerTester, SchedulerTestingModule } from '../../lib/testing/index.js';
import { track, turns } from '../support/settling.js';

const MISSING = '0190a5a0-0000-7000-8000-00000000f00d';
const Resize = defineJob<{ image: string; broken?: boolean }>({ name: 'image.resize', maxAttempts: 1 });
/** A definition with a declared sequence: as a batch callback it waits for its batch, not its sequence. */
const Audit = defineJob<{ album: string }>({ name: 'album.audit', sequence: { key: (payload) => `album:${payload.album}` } });

/** What the callbacks saw when they ran, in order. */
const seen: { name: string; batch: BatchSummary | null }[] = [];

@Job({ name: 'image.resize', maxAttempts: 1, transaction: false })
class ResizeImage implements JobHandler<{ image: string; broken?: boolean }> {
  async handle({ broken }: { image: string; broken?: boolean }) {
    if (broken) throw new PermanentJobError('cannot decode');
  }
}

/** A callback handler: reads its batch through the client, as a user's callback does. */
function callbackHandler(name: string) {
  @Job({ name, transaction: false })
  class Callback implements JobHandler<{ album: string }> {
    constructor(private readonly client: SchedulerClient) {}
    async handle(_payload: { album: string }, ctx: JobContext) {
      expect(ctx.batch).toMatchObject({ callback: expect.stringMatching(/^(success|complete|failure)$/) });
      seen.push({ name, batch: await this.client.getBatch(ctx.batch!.id) });
    }
  }
  return Callback;
}

const Done = callbackHandler('album.done');
const Published = callbackHandler('album.published');
const Broken = callbackHandler('album.broken');

describe('client.enqueueBatch under the testing kit', () => {
  let app: INestApplicationContext | undefined;

  afterEach(async () => {
    await app?.close();
    app = undefined;
    seen.length = 0;
  });

  async function boot() {
    const moduleRef = await Test.createTestingModule({
      imports: [SchedulerTestingModule.forRoot({ jobs: [Resize, Audit] })],
      providers: [ResizeImage, Done, Published, Broken],
    }).compile();
    app = await moduleRef.init();
    return { client: app.get(SchedulerClient), tester: app.get(SchedulerTester) };
  }

  it('runs the callbacks once, after the last job, with the counts and the failed ids; waitForBatch resolves then', async () => {
    const { client, tester } = await boot();
    const batch = await client.enqueueBatch(
      [
        { job: Resize, payload: { image: 'a.png' } },
        { job: Resize, payload: { image: 'b.png', broken: true } },
        { name: 'image.resize', payload: { image: 'c.png' } },
      ],
      {
        onSuccess: { name: 'album.published', payload: { album: 'x' } },
        onComplete: { name: 'album.done', payload: { album: 'x' } },
        onFailure: { name: 'album.broken', payload: { album: 'x' } },
      },
    );
    const wait = track(client.waitForBatch(batch.batchId));
    await turns();
    expect(wait.settled).toBe(false);
    await tester.drain();
    await turns();
    expect(seen.map((entry) => entry.name).sort()).toEqual(['album.broken', 'album.done']);
    for (const entry of seen) {
      expect(entry.batch).toMatchObject({ id: batch.batchId, total: 3, succeeded: 2, failed: 1, ended: true, failedJobIds: [batch.jobs[1]!.id] });
    }
    expect(wait.settled).toBe(true);
    const summary = wait.value!;
    expect(summary.callbacks.map((c) => [c.kind, c.state])).toEqual([
      ['success', 'cancelled'],
      ['complete', 'succeeded'],
      ['failure', 'succeeded'],
    ]);
    expect(await client.listBatches()).toEqual([expect.objectContaining({ id: batch.batchId, total: 3 })]);
  });

  it('when every job succeeds, onSuccess and onComplete run and onFailure is cancelled with its reason', async () => {
    const { client, tester } = await boot();
    const batch = await client.enqueueBatch([{ job: Resize, payload: { image: 'a.png' } }], {
      onSuccess: { name: 'album.published', payload: { album: 'y' } },
      onFailure: { name: 'album.broken', payload: { album: 'y' } },
    });
    await tester.drain();
    expect(seen.map((entry) => entry.name)).toEqual(['album.published']);
    expect(await client.get(batch.callbacks.onFailure!)).toMatchObject({ state: 'cancelled', lastError: 'every parent succeeded, so this on_failure job does not run' });
    expect(await client.waitForBatch(batch.batchId)).toMatchObject({ ended: true, succeeded: 1 });
  });

  it('cancels a batch as a whole: no callback runs, and the wait resolves with the cancelled counts', async () => {
    const { client, tester } = await boot();
    const batch = await client.enqueueBatch(
      [{ job: Resize, payload: { image: 'a.png' } }, { job: Resize, payload: { image: 'b.png' } }],
      { onComplete: { name: 'album.done', payload: { album: 'z' } } },
    );
    expect(await client.cancelBatch(batch.batchId)).toEqual({ cancelled: 3, cancelRequested: 0 });
    await tester.drain();
    expect(seen).toEqual([]);
    expect(await client.waitForBatch(batch.batchId)).toMatchObject({ cancelled: 2, pending: 0, ended: true, callbacks: [{ kind: 'complete', state: 'cancelled' }] });
  });

  it('a wait outlives a callback cancelled early: it reads the batch again until its last job ends', async () => {
    const { client, tester } = await boot();
    const batch = await client.enqueueBatch(
      [{ job: Resize, payload: { image: 'bad.png', broken: true } }, { job: Resize, payload: { image: 'late.png' }, delayMs: 60_000 }],
      { onSuccess: { name: 'album.published', payload: { album: 'u' } } },
    );
    const wait = track(client.waitForBatch(batch.batchId));
    await tester.drain();
    await turns();
    expect(await client.get(batch.callbacks.onSuccess!)).toMatchObject({ state: 'cancelled' });
    expect(wait.settled).toBe(false);
    await tester.advance(60_000);
    await tester.drain();
    await tester.advance(2_000);
    await turns();
    expect(wait.value).toMatchObject({ ended: true, succeeded: 1, failed: 1, callbacks: [{ kind: 'success', state: 'cancelled' }] });
    expect(seen).toEqual([]);
  });

  it('a wait that outlives its callbacks still gives up at its timeout, on the kit clock', async () => {
    const { client, tester } = await boot();
    const batch = await client.enqueueBatch(
      [{ job: Resize, payload: { image: 'bad.png', broken: true } }, { job: Resize, payload: { image: 'late.png' }, delayMs: 60_000 }],
      { onSuccess: { name: 'album.published', payload: { album: 's' } } },
    );
    const wait = track(client.waitForBatch(batch.batchId, { timeoutMs: 5_000 }));
    await tester.drain();
    await turns();
    expect(await client.get(batch.callbacks.onSuccess!)).toMatchObject({ state: 'cancelled' });
    await tester.advance(4_000);
    await turns();
    expect(wait.settled).toBe(false);
    await tester.advance(1_000);
    await turns();
    expect(wait.error).toBeInstanceOf(BatchWaitTimeoutError);
  });

  it('a wait gives up after its timeout on the kit clock, aborts with its signal, and refuses an unknown batch', async () => {
    const { client, tester } = await boot();
    // Due in a minute: the five seconds the kit's clock moves run nothing.
    const batch = await client.enqueueBatch([{ job: Resize, payload: { image: 'a.png' }, delayMs: 60_000 }], { onComplete: { name: 'album.done', payload: { album: 'w' } } });
    const timed = track(client.waitForBatch(batch.batchId, { timeoutMs: 5_000 }));
    const controller = new AbortController();
    const aborted = track(client.waitForBatch(batch.batchId, { signal: controller.signal }));
    await turns();
    controller.abort();
    await tester.advance(5_000);
    await turns();
    expect(timed.error).toBeInstanceOf(BatchWaitTimeoutError);
    expect((timed.error as Error).message).toBe(`Batch ${batch.batchId} did not end within 5000 ms; it was left as it is.`);
    expect(aborted.error).toBeInstanceOf(BatchWaitAbortedError);
    await expect(client.waitForBatch(MISSING)).rejects.toThrow(BatchNotFoundError);
    await expect(client.waitForBatch(MISSING)).rejects.toThrow(`No batch with id ${MISSING} exists.`);
    expect(await client.getBatch(MISSING)).toBeNull();
  });

  it('inline: enqueueBatch resolves once the batch and its callbacks have run', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [SchedulerTestingModule.forRoot({ jobs: [Resize], inline: true })],
      providers: [ResizeImage, Done, Published, Broken],
    }).compile();
    app = await moduleRef.init();
    const client = app.get(SchedulerClient);
    const batch = await client.enqueueBatch([{ job: Resize, payload: { image: 'a.png' } }], { onComplete: { name: 'album.done', payload: { album: 't' } } });
    expect(seen.map((entry) => entry.name)).toEqual(['album.done']);
    expect(await client.getBatch(batch.batchId)).toMatchObject({ ended: true, succeeded: 1, callbacks: [{ kind: 'complete', state: 'succeeded' }] });
  });

  it('a definition that declares a sequence can be a callback: the batch, not the sequence, decides when it runs', async () => {
    const { client } = await boot();
    const batch = await client.enqueueBatch([{ job: Resize, payload: { image: 'a.png' } }], { onComplete: { job: Audit, payload: { album: 'r' } } });
    expect(await client.get(batch.callbacks.onComplete!)).toMatchObject({ state: 'awaiting_parents', sequence: null, batch: { callback: 'complete' } });
    const plain = await client.enqueue(Audit, { album: 'r' });
    expect(await client.get(plain.id)).toMatchObject({ sequence: { key: 'album:r' } });
  });

  it('refuses bad batches before anything is written, naming the place', async () => {
    const { client } = await boot();
    const refuse = async (call: () => Promise<unknown>, message: RegExp) => {
      const error = await call().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidArgumentError);
      expect((error as Error).message).toMatch(message);
    };
    await refuse(() => client.enqueueBatch([], { onComplete: { name: 'album.done', payload: { album: 'v' } } }), /^enqueueBatch needs at least one job/);
    await refuse(() => client.enqueueBatch([{ job: Resize, payload: { image: 'a' } }], {}), /^enqueueBatch needs a callback/);
    await refuse(() => client.enqueueBatch([{ job: Resize, payload: { image: 'a' } }], { onComplete: { name: 'album.nope' as never, payload: {} } }), /^No @Job handler is registered for "album\.nope"/);
    await refuse(() => client.enqueueBatch([{ job: Resize, payload: { image: 'a' } }], { onDone: {} } as never), /onDone/);
    await refuse(() => client.enqueueBatch('x' as never, { onComplete: { name: 'album.done', payload: { album: 'v' } } }), /^enqueueBatch needs an array of jobs\.$/);
    await refuse(() => client.getBatch('nope'), /batchId/);
    await refuse(() => client.waitForBatch(MISSING, { timeout: 5 } as never), /^timeout is not a known waitForBatch option/);
    await expect(client.cancelBatch(MISSING)).rejects.toThrow(BatchNotFoundError);
    expect(await client.list()).toEqual([]);
  });
});
