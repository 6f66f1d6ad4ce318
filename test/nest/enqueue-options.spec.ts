import { describe, expect, it } from '@jest/globals';
import { Test } from '@nestjs/testing';
import { InvalidArgumentError, Job, SchedulerClient, SchedulerModule, type JobContext, type JobHandler } from '../../lib/index.js';
import { MemoryJobStore } from '../../lib/testing/index.js';
import { settled } from './support.js';

const attempts: number[] = [];

// The handler's own policy would wait ten minutes before its first retry.
@Job({ name: 'report.build', maxAttempts: 2, retry: { baseDelayMs: 300_000, jitter: false } })
class BuildReport implements JobHandler<{ id: string }> {
  async handle(_payload: { id: string }, ctx: JobContext) {
    attempts.push(ctx.attempt);
    if (ctx.attempt === 1) throw new Error('first attempt fails');
  }
}

async function boot(autoStart: boolean) {
  const moduleRef = await Test.createTestingModule({
    imports: [SchedulerModule.forRoot({ store: new MemoryJobStore(), autoStart, pollIntervalMs: 20, heartbeatIntervalMs: 1_000, leaseMs: 5_000 })],
    providers: [BuildReport],
  }).compile();
  return moduleRef.init();
}

describe('SchedulerClient enqueue options', () => {
  it('issue 19 item 10: retry and maxAttempts set at enqueue override the @Job defaults', async () => {
    const app = await boot(false);
    try {
      const client = app.get(SchedulerClient);
      const plain = await client.enqueue('report.build', { id: 'a' });
      const tuned = await client.enqueue('report.build', { id: 'b' }, { retry: { baseDelayMs: 0 }, maxAttempts: 5 });
      expect(await client.get(plain.id)).toMatchObject({ maxAttempts: 2, retry: null });
      expect(await client.get(tuned.id)).toMatchObject({ maxAttempts: 5, retry: { baseDelayMs: 0 } });
      const [many] = await client.enqueueMany([{ name: 'report.build', payload: { id: 'c' }, retry: { jitter: false, maxDelayMs: 10 } }]);
      expect((await client.get(many!.id))!.retry).toEqual({ jitter: false, maxDelayMs: 10 });
      // The shorthand is refused, naming the field and the right names.
      const error = await client.enqueue('report.build', { id: 'd' }, { retry: { baseMs: 0 } as never }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidArgumentError);
      expect((error as Error).message).toBe('retry.baseMs is not a retry option; the options are baseDelayMs, maxDelayMs and jitter.');
      expect(await client.list({ limit: 10 })).toHaveLength(3);
    } finally {
      await app.close();
    }
  });

  it('issue 19 item 10: a worker retries a job by the retry set at enqueue, not the ten-minute @Job default', async () => {
    const app = await boot(true);
    try {
      const client = app.get(SchedulerClient);
      const { id } = await client.enqueue('report.build', { id: 'e' }, { retry: { baseDelayMs: 0 } });
      const done = settled(app, id, (event) => event.state === 'succeeded');
      expect(await done).toMatchObject({ attempt: 2, status: 'applied' });
      expect(attempts).toEqual([1, 2]);
    } finally {
      await app.close();
    }
  });

  it('issue 19 item 9: uniqueKey and uniqueKeyMode pass through the client, and bad ones are refused', async () => {
    const app = await boot(false);
    try {
      const client = app.get(SchedulerClient);
      const first = await client.enqueue('report.build', { id: 'f' }, { uniqueKey: 'report:f', delayMs: 60_000 });
      expect(await client.enqueue('report.build', { id: 'f' }, { uniqueKey: 'report:f' })).toEqual({ id: first.id, created: false, deduplicated: 'kept' });
      expect(await client.enqueue('report.build', { id: 'f2' }, { uniqueKey: 'report:f', uniqueKeyMode: 'replace' })).toEqual({
        id: first.id,
        created: false,
        deduplicated: 'replaced',
      });
      expect((await client.get(first.id))!.payload).toEqual({ id: 'f2' });
      const [again] = await client.enqueueMany([{ name: 'report.build', payload: { id: 'f3' }, uniqueKey: 'report:f' }]);
      expect(again).toEqual({ id: first.id, created: false, deduplicated: 'kept' });
      await expect(client.enqueue('report.build', { id: 'g' }, { uniqueKey: '' })).rejects.toThrow(/^uniqueKey must be 1 to 200 characters/);
      await expect(client.enqueue('report.build', { id: 'g' }, { uniqueKeyMode: 'replace' })).rejects.toBeInstanceOf(InvalidArgumentError);
      expect(await client.list({ limit: 10 })).toHaveLength(1);
    } finally {
      await app.close();
    }
  });
});

describe('SchedulerClient reads each field of a job spec once', () => {
  it('issue 19 workerfix 3: enqueueMany reads name, payload and every option of a spec exactly once', async () => {
    const app = await boot(false);
    try {
      const client = app.get(SchedulerClient);
      const reads: Record<string, number> = {};
      const spec = {};
      const good: Record<string, unknown> = { name: 'report.build', payload: { id: 'r' }, maxAttempts: 4, uniqueKey: 'report-r' };
      for (const [key, value] of Object.entries(good)) {
        reads[key] = 0;
        // Good on the first read, an unknown name or a bad value on any later one.
        Object.defineProperty(spec, key, { enumerable: true, get: () => (++reads[key]! === 1 ? value : 'no.such.job') });
      }
      const [result] = await client.enqueueMany([spec as never]);
      expect(reads).toEqual({ name: 1, payload: 1, maxAttempts: 1, uniqueKey: 1 });
      expect(await client.get(result!.id)).toMatchObject({ name: 'report.build', payload: { id: 'r' }, maxAttempts: 4, uniqueKey: 'report-r' });
    } finally {
      await app.close();
    }
  });

  it('issue 19 workerfix 3: enqueue reads each of its options exactly once', async () => {
    const app = await boot(false);
    try {
      const client = app.get(SchedulerClient);
      const reads: Record<string, number> = {};
      const options = {};
      const good: Record<string, unknown> = { manager: undefined, maxAttempts: 4, concurrencyKey: 'tenant-1', delayMs: 0 };
      for (const [key, value] of Object.entries(good)) {
        reads[key] = 0;
        Object.defineProperty(options, key, { enumerable: true, get: () => (++reads[key]! === 1 ? value : -1) });
      }
      const { id } = await client.enqueue('report.build', { id: 'o' }, options);
      expect(reads).toEqual({ manager: 1, maxAttempts: 1, concurrencyKey: 1, delayMs: 1 });
      expect(await client.get(id)).toMatchObject({ maxAttempts: 4, concurrencyKey: 'tenant-1' });
    } finally {
      await app.close();
    }
  });
});
