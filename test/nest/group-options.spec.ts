import { describe, expect, it } from '@jest/globals';
import { Test } from '@nestjs/testing';
import { defineJob, InvalidArgumentError, Job, SchedulerClient, SchedulerModule, type JobHandler } from '../../lib/index.js';
import { MemoryJobStore } from '../../lib/testing/index.js';

type Export = { tenant: string; n: number };

const Export = defineJob<Export>({ name: 'export.build', group: (p) => p.tenant });

@Job({ name: 'invoice.send', group: (p: { account: string }) => p.account, concurrencyLimit: 2 })
class SendInvoice implements JobHandler<{ account: string }> {
  async handle() {}
}

@Job({ name: 'plain.job' })
class PlainJob implements JobHandler<object> {
  async handle() {}
}

async function boot(providers: unknown[], store = new MemoryJobStore()) {
  const moduleRef = await Test.createTestingModule({
    imports: [SchedulerModule.forRoot({ store, autoStart: false, jobs: [Export] })],
    providers: providers as never[],
  }).compile();
  return moduleRef.init();
}

describe('issue 39 item 1: fair groups through the Nest module', () => {
  it('computes the group from the payload (definition or @Job), lets an enqueue set it, and claims in turns', async () => {
    const store = new MemoryJobStore();
    const app = await boot([SendInvoice, PlainJob], store);
    try {
      const client = app.get(SchedulerClient);
      const big = await client.enqueueMany(Array.from({ length: 20 }, (_, n) => ({ job: Export, payload: { tenant: 'acme', n } })));
      const small = await client.enqueue(Export, { tenant: 'tiny', n: 0 });
      const set = await client.enqueue('plain.job' as never, {} as never, { group: 'ops' });
      expect(await client.get(big[0]!.id)).toMatchObject({ group: 'acme', concurrencyKey: 'acme' });
      expect(await client.get(set.id)).toMatchObject({ group: 'ops', concurrencyKey: 'ops' });
      // The groups with waiting jobs, as an operator's code lists them.
      expect((await client.listGroups()).map((g) => [g.group, g.due])).toEqual([
        ['acme', 20],
        ['ops', 1],
        ['tiny', 1],
      ]);
      const claimed = await store.jobClaim({ workerId: 'w', limit: 3, queues: ['default'], leaseMs: 60_000 });
      expect(claimed.map((job) => job.id).sort()).toEqual([big[0]!.id, small.id, set.id].sort());
      expect(await client.listGroups({ limit: 5 })).toEqual([
        { group: 'acme', due: 19, dueCapped: false, later: 0, laterCapped: false, oldestDueAt: expect.any(Date), concurrencyMax: null },
      ]);
    } finally {
      await app.close();
    }
  });

  it("a limit on a @Job with a group caps each group, and an enqueue's group moves the key with it", async () => {
    const store = new MemoryJobStore();
    const app = await boot([SendInvoice], store);
    try {
      const client = app.get(SchedulerClient);
      for (let i = 0; i < 3; i++) await client.enqueue('invoice.send' as never, { account: 'a1' } as never);
      const moved = await client.enqueue('invoice.send' as never, { account: 'a1' } as never, { group: 'a2' });
      expect(await client.get(moved.id)).toMatchObject({ group: 'a2', concurrencyKey: 'a2' });
      // A bad group given at enqueue is named as the group, though the handler's key follows it.
      const bad = await client.enqueue('invoice.send' as never, { account: 'a1' } as never, { group: '' }).catch((e: unknown) => e);
      expect((bad as Error).message).toMatch(/^group must be 1 to 200 characters without control characters, got /);
      const claimed = await store.jobClaim({ workerId: 'w', limit: 10, queues: ['default'], leaseMs: 60_000 });
      // Two of a1 (its cap), and a2's one.
      expect(claimed.map((job) => job.group).sort()).toEqual(['a1', 'a1', 'a2']);
    } finally {
      await app.close();
    }
  });

  it('refuses a group that is not a function on defineJob and @Job, and a group function that throws or answers badly, writing nothing', async () => {
    expect(() => defineJob({ name: 'bad.def', group: 'acme' as never })).toThrow("defineJob('bad.def') sets group to something other than a function of the payload.");
    @Job({ name: 'bad.group', group: 'acme' as never })
    class BadGroup implements JobHandler<object> {
      async handle() {}
    }
    const refused = await boot([BadGroup]).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(InvalidArgumentError);
    expect((refused as Error).message).toMatch(/BadGroup.*group/);

    const Throws = defineJob<{ secret: string }>({
      name: 'throws.group',
      group: () => {
        throw new Error('payload said hunter2');
      },
    });
    const Empty = defineJob<object>({ name: 'empty.group', group: () => '' });
    const app = await boot([]);
    try {
      const client = app.get(SchedulerClient);
      const thrown = await client.enqueue(Throws, { secret: 'hunter2' }).catch((e: unknown) => e);
      expect(thrown).toBeInstanceOf(InvalidArgumentError);
      expect((thrown as Error).message).toBe("The group function of @Job 'throws.group' threw for this payload (Error); nothing was written.");
      const empty = await client.enqueue(Empty, {}).catch((e: unknown) => e);
      expect((empty as Error).message).toBe("The group function of @Job 'empty.group' must return a non-empty string, got \"\".");
      const bad = await client.enqueue(Export, { tenant: 'a\nb', n: 1 }).catch((e: unknown) => e);
      expect((bad as Error).message).toMatch(/^group must be 1 to 200 characters without control characters, got /);
      expect(await client.list({ limit: 10 })).toHaveLength(0);
    } finally {
      await app.close();
    }
  });

  it('refuses a definition and a handler that disagree on the group', async () => {
    @Job({ name: 'export.build', group: (p: Export) => p.tenant })
    class OwnGroup implements JobHandler<Export> {
      async handle() {}
    }
    const error = await boot([OwnGroup]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect((error as Error).message).toContain('disagree on group');
  });
});
