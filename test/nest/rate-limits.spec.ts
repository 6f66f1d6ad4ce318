import { describe, expect, it } from '@jest/globals';
import { Test } from '@nestjs/testing';
import { defineJob, InvalidArgumentError, Job, SchedulerClient, SchedulerModule, type JobHandler, type SchedulerModuleOptions } from '../../lib/index.js';
import { ManualClock, MemoryJobStore, SchedulerTester, SchedulerTestingModule } from '../../lib/testing/index.js';

const Webhook = defineJob<{ tenant: string }>({ name: 'webhook.deliver', concurrencyKey: (p) => `tenant:${p.tenant}`, rateLimit: { max: 2, perMs: 60_000 } });

@Job({ name: 'report.render', rateLimit: { max: 1, perMs: 1_000 } })
class RenderReport implements JobHandler<object> {
  async handle() {}
}

const started: number[] = [];

@Job({ name: 'rated.job', transaction: false, rateLimit: { max: 2, perMs: 10_000 } })
class RatedJob implements JobHandler<object> {
  constructor(private readonly clock: ManualClock) {}
  async handle() {
    started.push(this.clock.now());
  }
}

@Job({ name: 'plain.job' })
class PlainJob implements JobHandler<object> {
  async handle() {}
}

async function boot(options: SchedulerModuleOptions, providers: unknown[] = []) {
  const moduleRef = await Test.createTestingModule({
    imports: [SchedulerModule.forRoot({ autoStart: false, queues: ['default', 'mail'], ...options })],
    providers: providers as never[],
  }).compile();
  return moduleRef.init();
}

/** The one-sentence message of the InvalidArgumentError a boot fails with. */
async function bootError(options: SchedulerModuleOptions, providers: unknown[] = []): Promise<string> {
  const error = await boot({ store: new MemoryJobStore(), ...options }, providers).then(
    (app) => app.close().then(() => undefined),
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(InvalidArgumentError);
  expect((error as Error).message).toMatch(/^[^\n]+\.$/);
  return (error as Error).message;
}

describe('rate limits through the Nest module', () => {
  it('declares rates from @Job, the definition and the enqueue per concurrency key, and sets rateLimits at boot', async () => {
    const store = new MemoryJobStore();
    const app = await boot({ store, jobs: [Webhook], rateLimits: [{ queue: 'mail', max: 10, perMs: 1_000 }, { key: 'partner-api', max: 5, perMs: 2_000 }] }, [RenderReport, PlainJob]);
    try {
      const client = app.get(SchedulerClient);
      const report = await client.enqueue('report.render' as never, {} as never);
      const hook = await client.enqueue(Webhook, { tenant: 'acme' });
      const plain = await client.enqueue('plain.job' as never, {} as never, { concurrencyKey: 'partner-api', rateLimit: { max: 1, perMs: 1 } });
      const [many] = await client.enqueueMany([{ name: 'plain.job' as never, payload: {} as never, concurrencyKey: 'batch', rateLimit: { max: 3, perMs: 500 } }]);
      // Without concurrencyKey, the key is the wire name, as for concurrencyLimit.
      expect((await client.get(report.id))!.concurrencyKey).toBe('report.render');
      expect((await client.get(hook.id))!.concurrencyKey).toBe('tenant:acme');
      expect((await client.get(plain.id))!.concurrencyKey).toBe('partner-api');
      expect((await client.get(many!.id))!.concurrencyKey).toBe('batch');
      // A key's first declaration stands: partner-api keeps the rate the module set at boot.
      expect(await client.listRateLimits()).toEqual([
        { key: 'batch', max: 3, perMs: 500 },
        { key: 'partner-api', max: 5, perMs: 2_000 },
        { key: 'report.render', max: 1, perMs: 1_000 },
        { key: 'tenant:acme', max: 2, perMs: 60_000 },
        { queue: 'mail', max: 10, perMs: 1_000 },
      ]);
      expect((await store.auditList({ limit: 10 })).filter((r) => r.action === 'rate_limit.set').map((r) => [r.actor, r.target])).toEqual([
        ['boot', 'key:partner-api'],
        ['boot', 'queue:mail'],
      ]);
    } finally {
      await app.close();
    }
  });

  it('holds claims to the rate on the store clock, reports the window, and lets the client change or remove it', async () => {
    const clock = new ManualClock();
    const store = new MemoryJobStore({ clock });
    const app = await boot({ store, jobs: [Webhook] });
    try {
      const client = app.get(SchedulerClient);
      const ids = [];
      for (let i = 0; i < 5; i += 1) ids.push((await client.enqueue(Webhook, { tenant: 'acme' })).id);
      const claim = async () => (await store.jobClaim({ workerId: 'w', limit: 10, queues: ['default'], leaseMs: 600_000 })).map((job) => job.id);
      expect(await claim()).toEqual(ids.slice(0, 2));
      expect(await claim()).toEqual([]);
      const now = new Date(clock.now());
      expect(await client.rateLimitStatus({ key: 'tenant:acme' })).toEqual({ max: 2, perMs: 60_000, startsInWindow: 2, fullUntil: new Date(now.getTime() + 60_000), now });
      clock.advance(60_000);
      expect(await claim()).toEqual(ids.slice(2, 4));
      // Raised, the limit adds unused starts at once.
      await client.setRateLimit({ key: 'tenant:acme' }, { max: 3, perMs: 60_000 });
      expect(await claim()).toEqual(ids.slice(4));
      await client.setRateLimit({ key: 'tenant:acme' }, null);
      expect(await client.rateLimitStatus({ key: 'tenant:acme' })).toBeNull();
      expect(await client.listRateLimits()).toEqual([]);
      expect((await store.auditList({ limit: 10 })).filter((r) => r.action === 'rate_limit.set').map((r) => r.detail)).toEqual([{ rate: null }, { rate: { max: 3, perMs: 60_000 } }]);
    } finally {
      await app.close();
    }
  });

  it('leaves a rate already set at boot alone, and keeps one dropped from rateLimits until an operator removes it', async () => {
    const store = new MemoryJobStore();
    const first = await boot({ store, rateLimits: [{ queue: 'mail', max: 10, perMs: 1_000 }, { key: 'old', max: 1, perMs: 1_000 }] });
    await first.close();
    const second = await boot({ store, rateLimits: [{ queue: 'mail', max: 10, perMs: 1_000 }] });
    try {
      expect(await second.get(SchedulerClient).listRateLimits()).toEqual([
        { key: 'old', max: 1, perMs: 1_000 },
        { queue: 'mail', max: 10, perMs: 1_000 },
      ]);
      expect((await store.auditList({ limit: 10 })).filter((r) => r.action === 'rate_limit.set')).toHaveLength(2);
    } finally {
      await second.close();
    }
    const third = await boot({ store, rateLimits: [{ queue: 'mail', max: 20, perMs: 1_000 }] });
    try {
      expect((await third.get(SchedulerClient).listRateLimits()).find((limit) => 'queue' in limit)).toEqual({ queue: 'mail', max: 20, perMs: 1_000 });
    } finally {
      await third.close();
    }
  });

  it('reads a rateLimits entry by the target it names: queue: undefined beside a key sets the key', async () => {
    const store = new MemoryJobStore();
    const app = await boot({ store, rateLimits: [{ queue: undefined, key: 'spread', max: 4, perMs: 1_000 } as never] });
    try {
      expect(await app.get(SchedulerClient).listRateLimits()).toEqual([{ key: 'spread', max: 4, perMs: 1_000 }]);
    } finally {
      await app.close();
    }
    // Booted again with the same option, the rate is recognised as set: no second audit entry.
    const again = await boot({ store, rateLimits: [{ queue: undefined, key: 'spread', max: 4, perMs: 1_000 } as never] });
    await again.close();
    expect((await store.auditList({ limit: 10 })).filter((r) => r.action === 'rate_limit.set')).toHaveLength(1);
  });

  it('refuses a bad rateLimits option at boot, with one sentence', async () => {
    expect(await bootError({ rateLimits: { mail: 5 } as never })).toMatch(/^rateLimits must be an array of \{ queue, max, perMs \} or \{ key, max, perMs \}/);
    expect(await bootError({ rateLimits: [null as never] })).toMatch(/^rateLimits\[0\] must be an object/);
    expect(await bootError({ rateLimits: [{ max: 1, perMs: 1 } as never] })).toBe('rateLimits[0] needs a target: { queue } or { key }.');
    expect(await bootError({ rateLimits: [{ queue: 'mail', key: 'k', max: 1, perMs: 1 } as never] })).toBe('rateLimits[0] names both a queue and a key; give one target: { queue } or { key }.');
    expect(await bootError({ rateLimits: [{ queue: 'mail', max: 1, perMs: 1, burst: 2 } as never] })).toMatch(/^rateLimits\[0\] has an unknown key "?burst"?; it takes/);
    expect(await bootError({ rateLimits: [{ queue: 'mail', max: 0, perMs: 1_000 }] })).toMatch(/^rateLimits\[0\]\.max must be a whole number/);
    expect(await bootError({ rateLimits: [{ queue: 'mail', max: 1, perMs: 86_400_001 }] })).toMatch(/^rateLimits\[0\]\.perMs must be a whole number/);
    expect(await bootError({ rateLimits: [{ queue: 'bad/queue', max: 1, perMs: 1 }] })).toMatch(/^rateLimits\[0\]\.queue /);
    expect(await bootError({ rateLimits: [{ key: '', max: 1, perMs: 1 }] })).toMatch(/^rateLimits\[0\]\.key /);
    expect(await bootError({ rateLimits: [{ key: 'a', max: 1, perMs: 1 }, { key: 'a', max: 2, perMs: 1 }] })).toBe('rateLimits sets the key a twice; give each target one rate.');
  });

  it('refuses a bad rateLimit on defineJob, on @Job at boot naming the class, and at enqueue', async () => {
    expect(() => defineJob({ name: 'bad.def', rateLimit: { max: 0, perMs: 1_000 } })).toThrow(/^defineJob\('bad.def'\) rateLimit\.max must be a whole number/);
    expect(() => defineJob({ name: 'bad.def', rateLimit: { max: 1, per: 1_000 } as never })).toThrow(/^defineJob\('bad.def'\) rateLimit has an unknown key/);
    @Job({ name: 'bad.rate', rateLimit: { max: 1, perMs: 0 } })
    class BadRate implements JobHandler<object> {
      async handle() {}
    }
    expect(await bootError({}, [BadRate])).toMatch(/^BadRate \(@Job 'bad\.rate'\) rateLimit\.perMs must be a whole number/);
    const store = new MemoryJobStore();
    const app = await boot({ store }, [PlainJob]);
    try {
      const client = app.get(SchedulerClient);
      const noKey = await client.enqueue('plain.job' as never, {} as never, { rateLimit: { max: 1, perMs: 1_000 } }).catch((e: unknown) => e);
      expect(noKey).toBeInstanceOf(InvalidArgumentError);
      expect((noKey as Error).message).toBe('rateLimit needs a concurrencyKey or a group.');
      const bad = await client.enqueue('plain.job' as never, {} as never, { concurrencyKey: 'k', rateLimit: { max: 10_001, perMs: 1_000 } }).catch((e: unknown) => e);
      expect(bad).toBeInstanceOf(InvalidArgumentError);
      expect(await client.list({ limit: 10 })).toHaveLength(0);
      // At run time, through the client: each refusal one sentence, and nothing set or audited.
      const refusal = async (call: Promise<unknown>) => {
        const error = await call.then(() => undefined, (e: unknown) => e);
        expect(error).toBeInstanceOf(InvalidArgumentError);
        expect((error as Error).message).toMatch(/^[^\n]+\.$/);
        return (error as Error).message;
      };
      expect(await refusal(client.setRateLimit({ queue: 'mail' }, { max: 0, perMs: 1_000 }))).toMatch(/^rate\.max must be a whole number/);
      expect(await refusal(client.setRateLimit({ key: 'k' }, { max: 1, perMs: 86_400_001 }))).toMatch(/^rate\.perMs must be a whole number/);
      expect(await refusal(client.setRateLimit({ key: 'k' }, { max: 1, per: 1_000 } as never))).toMatch(/^rate has an unknown key/);
      expect(await refusal(client.setRateLimit({ key: 'k' }, undefined as never))).toMatch(/^rate must be an object \{ max, perMs \}/);
      expect(await refusal(client.setRateLimit({} as never, { max: 1, perMs: 1_000 }))).toBe('A rate limit needs a target: { queue } or { key }.');
      expect(await refusal(client.setRateLimit({ queue: 'bad/queue' }, { max: 1, perMs: 1_000 }))).toMatch(/^queue /);
      expect(await refusal(client.rateLimitStatus({ key: '' }))).toMatch(/^key /);
      expect(await client.listRateLimits()).toEqual([]);
      expect((await store.auditList({ limit: 10 })).filter((r) => r.action === 'rate_limit.set')).toEqual([]);
    } finally {
      await app.close();
    }
  });

  it('refuses a definition and a handler that disagree on the rate, and a handler that sets it beside its definition', async () => {
    const Shared = defineJob({ name: 'report.render', rateLimit: { max: 2, perMs: 1_000 } });
    expect(await bootError({ jobs: [Shared as never] }, [RenderReport])).toContain('disagree on rateLimit');
    const Same = defineJob({ name: 'report.render', rateLimit: { max: 1, perMs: 1_000 } });
    const app = await boot({ store: new MemoryJobStore(), jobs: [Same as never] }, [RenderReport]);
    await app.close();
    expect(() => Job(Webhook, { rateLimit: { max: 1, perMs: 1 } } as never)(class Twice {} as never)).toThrow(
      "Twice (@Job 'webhook.deliver') sets rateLimit beside its definition; set it in defineJob, so producers use it too.",
    );
  });

  it('lets the testing kit drain a rate-limited backlog by waiting out each window with advanceTime', async () => {
    const clock = new ManualClock();
    const moduleRef = await Test.createTestingModule({
      imports: [SchedulerTestingModule.forRoot({ clock, rateLimits: [{ queue: 'default', max: 5, perMs: 60_000 }] })],
      providers: [RatedJob, { provide: ManualClock, useValue: clock }],
    }).compile();
    const app = await moduleRef.init();
    try {
      started.length = 0;
      const t0 = clock.now();
      const client = app.get(SchedulerClient);
      for (let i = 0; i < 5; i += 1) await client.enqueue('rated.job' as never, {} as never);
      const tester = app.get(SchedulerTester);
      // Without advanceTime, the jobs over their rate wait.
      expect(await tester.drain()).toMatchObject({ attempts: 2, waiting: 3 });
      expect(await tester.drain({ advanceTime: true })).toMatchObject({ attempts: 3, succeeded: 3, waiting: 0, advancedMs: 20_000 });
      expect(started.map((at) => at - t0)).toEqual([0, 0, 10_000, 10_000, 20_000]);
    } finally {
      await app.close();
    }
  });
});
