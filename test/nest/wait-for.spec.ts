import { describe, expect, it } from '@jest/globals';
import { Test } from '@nestjs/testing';
import {
  InvalidArgumentError,
  Job,
  JobFailedError,
  JobWaiterClosedError,
  PermanentJobError,
  SchedulerClient,
  SchedulerModule,
  type JobContext,
  type JobHandler,
} from '../../lib/index.js';
import { MemoryJobStore } from '../../lib/testing/index.js';

@Job({ name: 'price.quote' })
class QuotePrice implements JobHandler<{ items: number }> {
  async handle(payload: { items: number }, ctx: JobContext<{ items: number }>) {
    ctx.setOutput({ total: payload.items * 3 });
  }
}

@Job({ name: 'price.refuse', maxAttempts: 2 })
class RefusePrice implements JobHandler<{ items: number }> {
  async handle() {
    throw new PermanentJobError('catalogue closed');
  }
}

async function boot(autoStart: boolean) {
  const moduleRef = await Test.createTestingModule({
    imports: [SchedulerModule.forRoot({ store: new MemoryJobStore(), autoStart })],
    providers: [QuotePrice, RefusePrice],
  }).compile();
  return moduleRef.init();
}

describe('SchedulerClient.waitFor', () => {
  it('resolves with the output of a job this app ran, and rejects with the last error of one that failed', async () => {
    const app = await boot(true);
    try {
      const client = app.get(SchedulerClient);
      const { id } = await client.enqueue('price.quote', { items: 4 });
      await expect(client.waitFor(id, { timeoutMs: 60_000 })).resolves.toMatchObject({ jobId: id, state: 'succeeded', output: { total: 12 }, attempt: 1 });
      const refused = await client.enqueue('price.refuse', { items: 1 });
      const error = await client.waitFor(refused.id).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(JobFailedError);
      expect(error).toMatchObject({ jobId: refused.id, state: 'dead_lettered', attempt: 1 });
      expect((error as JobFailedError).lastError).toContain('catalogue closed');
      await expect(client.waitFor('not-a-job')).rejects.toBeInstanceOf(InvalidArgumentError);
    } finally {
      await app.close();
    }
  });

  it('rejects pending waits with JobWaiterClosedError when the app shuts down, and later waits at once', async () => {
    const app = await boot(false);
    const client = app.get(SchedulerClient);
    const { id } = await client.enqueue('price.quote', { items: 1 });
    const pending = client.waitFor(id).catch((e: unknown) => e);
    await app.close();
    expect(await pending).toBeInstanceOf(JobWaiterClosedError);
    await expect(client.waitFor(id)).rejects.toBeInstanceOf(JobWaiterClosedError);
  });
});
