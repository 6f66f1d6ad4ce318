import { describe, expect, it } from '@jest/globals';
import { Test } from '@nestjs/testing';
import { defineJob, InvalidArgumentError, Job, SchedulerClient, SchedulerModule, type JobHandler } from '../../lib/index.js';
import { MemoryJobStore } from '../../lib/testing/index.js';

const Receipt = defineJob<{ orderId: string }>({ name: 'receipt.send', priority: -3 });

@Job({ name: 'report.rebuild', priority: 5 })
class RebuildReport implements JobHandler<{ id: string }> {
  async handle() {}
}

@Job({ name: 'plain.job' })
class PlainJob implements JobHandler<object> {
  async handle() {}
}

async function boot(providers: unknown[], jobs = [Receipt], store = new MemoryJobStore()) {
  const moduleRef = await Test.createTestingModule({
    imports: [SchedulerModule.forRoot({ store, autoStart: false, jobs })],
    providers: providers as never[],
  }).compile();
  return moduleRef.init();
}

describe('priorities through the Nest module', () => {
  it('takes the default from @Job or the definition, lets an enqueue override it, and claims in that order', async () => {
    const store = new MemoryJobStore();
    const app = await boot([RebuildReport, PlainJob], [Receipt], store);
    try {
      const client = app.get(SchedulerClient);
      const report = await client.enqueue('report.rebuild' as never, { id: 'r' } as never);
      const plain = await client.enqueue('plain.job' as never, {} as never);
      const receipt = await client.enqueue(Receipt, { orderId: 'o' });
      const urgent = await client.enqueue('report.rebuild' as never, { id: 'u' } as never, { priority: -10 });
      const [many] = await client.enqueueMany([{ job: Receipt, payload: { orderId: 'm' }, priority: 10 }]);
      expect((await client.get(report.id))!.priority).toBe(5);
      expect((await client.get(plain.id))!.priority).toBe(0);
      expect((await client.get(receipt.id))!.priority).toBe(-3);
      expect((await client.get(urgent.id))!.priority).toBe(-10);
      expect((await client.get(many!.id))!.priority).toBe(10);
      const claimed = await store.jobClaim({ workerId: 'w', limit: 10, queues: ['default'], leaseMs: 60_000 });
      expect(claimed.map((job) => job.id)).toEqual([urgent.id, receipt.id, plain.id, report.id, many!.id]);
    } finally {
      await app.close();
    }
  });

  it('refuses a bad priority on defineJob, on @Job at boot, and at enqueue, naming the rule', async () => {
    expect(() => defineJob({ name: 'bad.def', priority: 11 })).toThrow("defineJob('bad.def') priority must be a whole number from -10 (first) to 10 (last), got 11.");
    @Job({ name: 'bad.priority', priority: 0.5 })
    class BadPriority implements JobHandler<object> {
      async handle() {}
    }
    const boot1 = await boot([BadPriority]).catch((e: unknown) => e);
    expect(boot1).toBeInstanceOf(InvalidArgumentError);
    expect((boot1 as Error).message).toMatch(/BadPriority.*priority must be a whole number from -10 \(first\) to 10 \(last\), got 0\.5\./);
    const app = await boot([PlainJob]);
    try {
      const error = await app.get(SchedulerClient).enqueue('plain.job' as never, {} as never, { priority: -11 }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidArgumentError);
      expect(await app.get(SchedulerClient).list({ limit: 10 })).toHaveLength(0);
    } finally {
      await app.close();
    }
  });

  it('refuses a definition and a handler that disagree on the priority', async () => {
    const Shared = defineJob({ name: 'report.rebuild', priority: 4 });
    const error = await boot([RebuildReport], [Shared as never]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect((error as Error).message).toContain('disagree on priority');
  });
});
