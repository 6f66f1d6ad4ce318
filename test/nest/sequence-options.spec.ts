import { describe, expect, it } from '@jest/globals';
import { Test } from '@nestjs/testing';
import { defineJob, InvalidArgumentError, Job, SchedulerClient, SchedulerModule, type JobHandler } from '../../lib/index.js';
import { MemoryJobStore } from '../../lib/testing/index.js';

const Post = defineJob<{ accountId: string; cents: number }>({ name: 'ledger.post', sequence: { key: (entry) => `account:${entry.accountId}` } });

@Job({ name: 'ledger.notify', sequence: { key: (payload: { accountId: string }) => `account:${payload.accountId}`, afterFailure: 'continue' } })
class Notify implements JobHandler<{ accountId: string }> {
  async handle() {}
}

@Job({ name: 'ledger.fragile', sequence: { key: () => { throw new Error('secret payload text'); } } })
class Fragile implements JobHandler<unknown> {
  async handle() {}
}

async function boot(providers: unknown[] = [Notify, Fragile]) {
  const moduleRef = await Test.createTestingModule({
    imports: [SchedulerModule.forRoot({ store: new MemoryJobStore(), autoStart: false, jobs: [Post] })],
    providers: providers as never[],
  }).compile();
  return moduleRef.init();
}

describe('sequences declared on defineJob and @Job', () => {
  it('computes each job\'s key from its payload, across definitions and handlers, and an enqueue\'s own sequence wins', async () => {
    const app = await boot();
    try {
      const client = app.get(SchedulerClient);
      const first = await client.enqueue(Post, { accountId: 'a1', cents: 100 });
      const other = await client.enqueue(Post, { accountId: 'a2', cents: 5 });
      const second = await client.enqueue('ledger.notify', { accountId: 'a1' });
      const own = await client.enqueue(Post, { accountId: 'a1', cents: 1 }, { sequence: { key: 'elsewhere' } });
      expect(await client.get(first.id)).toMatchObject({ state: 'scheduled', sequence: { key: 'account:a1', afterFailure: 'block' } });
      expect(await client.get(other.id)).toMatchObject({ state: 'scheduled', sequence: { key: 'account:a2' } });
      expect(await client.get(second.id)).toMatchObject({ state: 'awaiting_parents', sequence: { key: 'account:a1', afterFailure: 'continue' } });
      expect(await client.get(own.id)).toMatchObject({ state: 'scheduled', sequence: { key: 'elsewhere', afterFailure: 'block' } });
      expect(await client.listBlockedSequences()).toEqual([]);
    } finally {
      await app.close();
    }
  });

  it('refuses a payload whose key function throws, without quoting what it threw, and writes nothing', async () => {
    const app = await boot();
    try {
      const client = app.get(SchedulerClient);
      const error = await client.enqueue('ledger.fragile', { any: 1 }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidArgumentError);
      expect((error as Error).message).toBe("The sequence key function of the job 'ledger.fragile' threw for this payload (Error); nothing was written.");
      expect(await client.list()).toEqual([]);
    } finally {
      await app.close();
    }
  });

  it('refuses a sequence option that is not { key: function, afterFailure? }', async () => {
    expect(() => defineJob({ name: 'x', sequence: { key: 'fixed' } as never })).toThrow(
      /^defineJob\('x'\) sequence must be \{ key: \(payload\) => string, afterFailure\? \}, got/,
    );
    expect(() => defineJob({ name: 'x', sequence: { key: () => 'k', afterFailure: 'skip' } as never })).toThrow(
      `defineJob('x') sequence.afterFailure must be "block" or "continue", got "skip".`,
    );
    @Job({ name: 'bad.sequence', sequence: { key: () => 'k', extra: 1 } as never })
    class Bad implements JobHandler<unknown> {
      async handle() {}
    }
    await expect(boot([Bad])).rejects.toThrow(/^Bad \(@Job 'bad\.sequence'\) sequence sets "extra"; it takes key and afterFailure\.$/);
  });
});
