import { afterEach, describe, expect, it } from '@jest/globals';
import type { INestApplicationContext } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import { InvalidArgumentError, Job, SchedulerClient, type JobHandler } from '../../lib/index.js';
import { SchedulerTester, SchedulerTestingModule } from '../../lib/testing/index.js';

/** What each handler ran with, by the kit's clock. */
const runs: { name: string; payload: unknown; at: number }[] = [];

@Job({ name: 'search.reindex' })
class Reindex implements JobHandler<{ doc: number; rev: number }> {
  constructor(private readonly tester: SchedulerTester) {}
  async handle(payload: { doc: number; rev: number }) {
    runs.push({ name: 'search.reindex', payload, at: this.tester.now().getTime() });
  }
}

@Job({ name: 'alert.page' })
class PageOnCall implements JobHandler<{ host: string; n: number }> {
  constructor(private readonly tester: SchedulerTester) {}
  async handle(payload: { host: string; n: number }) {
    runs.push({ name: 'alert.page', payload, at: this.tester.now().getTime() });
  }
}

describe('issue 39 item 4: debounce and throttle through SchedulerClient', () => {
  let app: INestApplicationContext | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
    runs.length = 0;
  });

  async function boot(store: 'memory' | 'sqlite') {
    const imports = store === 'sqlite' ? [TypeOrmModule.forRoot({ type: 'better-sqlite3', database: ':memory:' })] : [];
    const moduleRef = await Test.createTestingModule({ imports: [...imports, SchedulerTestingModule.forRoot({ store })], providers: [Reindex, PageOnCall] }).compile();
    app = await moduleRef.init();
    return { client: app.get(SchedulerClient), tester: app.get(SchedulerTester) };
  }

  it.each(['sqlite', 'memory'] as const)('a debounced key runs once, with its last payload, a window after its last enqueue (%s store)', async (store) => {
    const { client, tester } = await boot(store);
    const start = tester.now().getTime();
    const debounce = { key: 'doc:7', windowMs: 5_000 };
    const first = await client.enqueue('search.reindex', { doc: 7, rev: 1 }, { debounce });
    await tester.advance(3_000);
    expect(await client.enqueue('search.reindex', { doc: 7, rev: 2 }, { debounce })).toEqual({ id: first.id, created: false, deduplicated: 'debounced' });
    await tester.advance(3_000);
    await client.enqueue('search.reindex', { doc: 7, rev: 3 }, { debounce });
    expect(runs).toEqual([]);
    expect(await tester.drain({ advanceTime: true })).toMatchObject({ attempts: 1, succeeded: 1 });
    expect(runs).toEqual([{ name: 'search.reindex', payload: { doc: 7, rev: 3 }, at: start + 11_000 }]);
  });

  it.each(['sqlite', 'memory'] as const)('a throttled key runs its first enqueue at once and drops the rest of its window (%s store)', async (store) => {
    const { client, tester } = await boot(store);
    const throttle = { key: 'host:a', windowMs: 60_000 };
    const first = await client.enqueue('alert.page', { host: 'a', n: 1 }, { throttle });
    expect(first.created).toBe(true);
    expect(await client.enqueue('alert.page', { host: 'a', n: 2 }, { throttle })).toEqual({ id: first.id, created: false, deduplicated: 'throttled' });
    await tester.advance(60_000);
    expect((await client.enqueue('alert.page', { host: 'a', n: 3 }, { throttle })).created).toBe(true);
    await tester.drain();
    expect(runs.map((run) => run.payload)).toEqual([
      { host: 'a', n: 1 },
      { host: 'a', n: 3 },
    ]);
  });

  it('refuses a debounce with a delay in one sentence, and writes nothing', async () => {
    const { client } = await boot('memory');
    await expect(client.enqueue('search.reindex', { doc: 1, rev: 1 }, { debounce: { key: 'k', windowMs: 10 }, delayMs: 5 })).rejects.toThrow(
      new InvalidArgumentError('debounce cannot be combined with delayMs.', 'debounce'),
    );
    expect(await client.list({})).toEqual([]);
  });
});
