import { describe, expect, it } from '@jest/globals';
import { Test } from '@nestjs/testing';
import { InvalidArgumentError, Job, SchedulerClient, SchedulerModule, SchedulerOrchestrator, type JobHandler, type SchedulerModuleOptions } from '../../lib/index.js';
import { SchedulerDashboardModule } from '../../lib/dashboard/index.js';
import { FunctionInvoker, MemoryJobStore, WorkerNode } from '../../lib/testing/index.js';
import { refusal } from '../support/refusal.js';

@Job({ name: 'report.render' })
class RenderReport implements JobHandler<{ n: number }> {
  async handle() {}
}

async function boot(store: MemoryJobStore, options: SchedulerModuleOptions = {}) {
  const moduleRef = await Test.createTestingModule({
    imports: [SchedulerModule.forRoot({ store, autoStart: false, queues: ['default', 'mail'], ...options })],
    providers: [RenderReport],
  }).compile();
  return moduleRef.init();
}

/** Whether `promise` has settled once the current turn of the event loop is over: no waiting on any timer. */
async function settledAtOnce(promise: Promise<unknown>): Promise<boolean> {
  const settled = promise.then(
    () => true,
    () => true,
  );
  return Promise.race([settled, new Promise<boolean>((resolve) => setImmediate(() => resolve(false)))]);
}

describe('unknown options through the Nest module and the client', () => {
  it('issue 35 item 7: waitFor(id, { timeout: 5 }) rejects at once with the typed error, and waits for nothing', async () => {
    const store = new MemoryJobStore();
    const app = await boot(store);
    try {
      const client = app.get(SchedulerClient);
      const { id } = await client.enqueue('report.render', { n: 1 });
      const wait = client.waitFor(id, { timeout: 5 } as never);
      wait.catch(() => undefined);
      expect(await settledAtOnce(wait)).toBe(true);
      expect(await refusal(() => wait)).toBe('timeout is not a known waitFor option (did you mean timeoutMs?); known options are timeoutMs, signal.');
      expect(await refusal(() => client.waitFor(id, [] as never))).toBe('options must be an object, got an array.');
      expect(await refusal(() => client.waitFor(id, new Map() as never))).toBe('options must be an object, got a Map.');
      // Nothing waits: the refused calls left no pending wait behind.
      expect(app.get(SchedulerOrchestrator).waiter.pending).toBe(0);
    } finally {
      await app.close();
    }
  });

  it('issue 35 item 7: a misspelt module option is refused at boot naming the option it most likely meant, and a misspelt forRootAsync key at once', async () => {
    const store = new MemoryJobStore();
    const booted = await boot(store, { pollIntervallMs: 5 } as never).then(
      (app) => app.close().then(() => undefined),
      (e: unknown) => e,
    );
    expect(booted).toBeInstanceOf(InvalidArgumentError);
    expect((booted as Error).message).toBe('pollIntervallMs is not a known SchedulerModule option (did you mean pollIntervalMs?); see docs/module-options.md for the options.');
    expect(await refusal(() => SchedulerModule.forRootAsync({ useFactroy: () => ({ store }) } as never))).toBe(
      'useFactroy is not a known SchedulerModule.forRootAsync option (did you mean useFactory?); known options are imports, useFactory, inject, useClass, useExisting, provideInjectionTokensFrom, isGlobal, dataSourceName.',
    );
    expect(store.rows()).toEqual([]);
  });

  it('issue 35 item 7: enqueueMany refuses an unknown key in its options, and writes nothing', async () => {
    const store = new MemoryJobStore();
    const app = await boot(store);
    try {
      const client = app.get(SchedulerClient);
      expect(await refusal(() => client.enqueueMany([{ name: 'report.render', payload: { n: 1 } }], { manger: undefined } as never))).toMatch(
        /^manger is not a known enqueueMany option \(did you mean manager\?\); known options are manager\.$/,
      );
      expect(await refusal(() => client.enqueue('report.render', { n: 1 }, { delay: 5 } as never))).toMatch(/^delay is not a known enqueue option \(did you mean delayMs\?\)/);
      expect(store.rows()).toEqual([]);
    } finally {
      await app.close();
    }
  });

  it('issue 35 item 7: the dashboard module, a WorkerNode and its worker options refuse an unknown key', async () => {
    expect(await refusal(() => SchedulerDashboardModule.forRoot({ readonly: true, allowUnguarded: true } as never))).toMatch(
      /^readonly is not a known SchedulerDashboardModule option \(did you mean readOnly\?\)/,
    );
    const store = new MemoryJobStore();
    expect(await refusal(() => new WorkerNode({ store, invoker: new FunctionInvoker({}), observer: [] } as never))).toMatch(/^observer is not a known WorkerNode option \(did you mean observers\?\)/);
    expect(await refusal(() => new WorkerNode({ store, invoker: new FunctionInvoker({}), options: { concurency: 4 } as never }))).toBe(
      'concurency is not a known worker option (did you mean concurrency?); see docs/module-options.md for the options.',
    );
  });

  it('issue 35 item 8: setRateLimit, setConcurrencyLimit and rateLimitStatus refuse a target naming both a queue and a key, and change nothing', async () => {
    const store = new MemoryJobStore();
    const app = await boot(store, { rateLimits: [{ key: 'tenant-1', max: 5, perMs: 60_000 }], queueLimits: { mail: 3 } });
    try {
      const client = app.get(SchedulerClient);
      const limits = await client.listConcurrencyLimits();
      const rates = await client.listRateLimits();
      const audit = await store.auditList({ limit: 100 });
      const both = { queue: 'mail', key: 'tenant-1' } as never;
      expect(await refusal(() => client.setRateLimit(both, { max: 1, perMs: 1_000 }))).toBe('A rate limit names both a queue and a key; give one target: { queue } or { key }.');
      expect(await refusal(() => client.setRateLimit(both, null))).toBe('A rate limit names both a queue and a key; give one target: { queue } or { key }.');
      expect(await refusal(() => client.setConcurrencyLimit(both, 1))).toBe('A concurrency limit names both a queue and a key; give one target: { queue } or { key }.');
      expect(await refusal(() => client.setConcurrencyLimit(both, null))).toBe('A concurrency limit names both a queue and a key; give one target: { queue } or { key }.');
      expect(await refusal(() => client.rateLimitStatus(both))).toBe('A rate limit names both a queue and a key; give one target: { queue } or { key }.');
      expect(await refusal(() => client.setConcurrencyLimit({} as never, 1))).toBe('A concurrency limit needs a target: { queue } or { key }.');
      expect(await client.listConcurrencyLimits()).toEqual(limits);
      expect(await client.listRateLimits()).toEqual(rates);
      expect(await store.auditList({ limit: 100 })).toEqual(audit);
    } finally {
      await app.close();
    }
  });

  it('issue 35 item 8: the rateLimits module option refuses both targets, or neither, in the words the client uses', async () => {
    for (const [entry, message] of [
      [{ queue: 'mail', key: 'k', max: 1, perMs: 1_000 }, 'rateLimits[0] names both a queue and a key; give one target: { queue } or { key }.'],
      [{ max: 1, perMs: 1_000 }, 'rateLimits[0] needs a target: { queue } or { key }.'],
    ] as const) {
      const store = new MemoryJobStore();
      const booted = await boot(store, { rateLimits: [entry as never] }).then(
        (app) => app.close().then(() => undefined),
        (e: unknown) => e,
      );
      expect(booted).toBeInstanceOf(InvalidArgumentError);
      expect((booted as Error).message).toBe(message);
      expect(await store.rateLimitList()).toEqual([]);
      expect(await store.auditList({ limit: 10 })).toEqual([]);
    }
  });
});
