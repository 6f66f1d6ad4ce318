import { afterEach, expect, it } from '@jest/globals';
import type { DynamicModule, INestApplicationContext, Type } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { randomUUID } from 'node:crypto';
import {
  defineJob,
  InvalidArgumentError,
  Job,
  SchedulerClient,
  SchedulerModule,
  SchedulerOrchestrator,
  type JobContext,
  type JobHandler,
  type PayloadOf,
  type SchedulerModuleOptions,
} from '../../lib/index.js';
import { settled } from './support.js';

/** The definition both sides import, as from a shared package. */
export const ConfirmOrder = defineJob<{ orderId: string; failFirst?: boolean }>({
  name: 'orders.confirm-shared',
  queue: 'orders',
  maxAttempts: 3,
  retry: { baseDelayMs: 30_000, maxDelayMs: 30_000, jitter: false },
  concurrencyKey: (payload) => `order:${payload.orderId}`,
  concurrencyLimit: 1,
});

export const confirmed: string[] = [];

@Job(ConfirmOrder, { timeoutMs: 10_000 })
export class ConfirmOrderJob implements JobHandler<PayloadOf<typeof ConfirmOrder>> {
  async handle(payload: PayloadOf<typeof ConfirmOrder>, ctx: JobContext) {
    if (payload.failFirst && ctx.attempt === 1) throw new Error('not yet');
    confirmed.push(payload.orderId);
  }
}

/** How one environment boots an app: its database imports, plus the scheduler options to use. */
export type Boot = (options: SchedulerModuleOptions, providers: Type<unknown>[]) => Promise<INestApplicationContext>;

/** Boots with the given database module(s) and scheduler options. */
export async function bootApp(imports: DynamicModule[], options: SchedulerModuleOptions, providers: Type<unknown>[]): Promise<INestApplicationContext> {
  const moduleRef = await Test.createTestingModule({ imports: [...imports, SchedulerModule.forRoot(options)], providers }).compile();
  return moduleRef.init();
}

const FAST = { pollIntervalMs: 50, heartbeatIntervalMs: 1_000, leaseMs: 5_000 };

/**
 * A producer-only app (no handler class, `worker: false`) and a worker app (the handler, by the
 * same definition) on one store. `environment()` returns how to boot an app on it.
 */
export function producerOnlyCases(environment: () => Promise<{ boot: Boot; cleanup: () => Promise<void> }>): void {
  const apps: INestApplicationContext[] = [];
  let cleanup: (() => Promise<void>) | undefined;
  async function start(options: SchedulerModuleOptions, providers: Type<unknown>[] = []) {
    if (!cleanup) {
      const env = await environment();
      cleanup = env.cleanup;
      boot = env.boot;
    }
    const app = await boot(options, providers);
    apps.push(app);
    return app;
  }
  let boot: Boot;

  afterEach(async () => {
    // In boot order: each test boots its worker before its producer, and a shared store closes with the first app.
    for (const app of apps.splice(0)) await app.close();
    await cleanup?.();
    cleanup = undefined;
  });

  it('issue 19 item 14: a producer with no handler enqueues by the definition, with its queue, attempts and concurrency key', async () => {
    const producer = await start({ worker: false });
    const client = producer.get(SchedulerClient);
    const { id, created } = await client.enqueue(ConfirmOrder, { orderId: 'o-1' }, { delayMs: 60_000 });
    expect(created).toBe(true);
    expect(await client.get(id)).toMatchObject({ name: 'orders.confirm-shared', queue: 'orders', maxAttempts: 3, concurrencyKey: 'order:o-1', state: 'scheduled' });
    const [batch] = await client.enqueueMany([{ job: ConfirmOrder, payload: { orderId: 'o-2' }, maxAttempts: 2, delayMs: 60_000 }]);
    expect(await client.get(batch!.id)).toMatchObject({ queue: 'orders', maxAttempts: 2, concurrencyKey: 'order:o-2' });
    // Nothing runs on a producer-only node: no claim, no lease, no timers.
    expect(producer.get(SchedulerOrchestrator).node.status).toBe('idle');
    await expect(producer.get(SchedulerOrchestrator).start()).rejects.toThrow('This node was built with worker: false, so it runs no worker; remove that option to run jobs here.');
  });

  it('issue 19 item 14: a name is refused unless a handler or a listed definition knows it', async () => {
    const bare = await start({ worker: false });
    await expect(bare.get(SchedulerClient).enqueue('orders.confirm-shared', { orderId: 'o-3' })).rejects.toThrow(InvalidArgumentError);
    await expect(bare.get(SchedulerClient).enqueue('orders.confirm-shared', { orderId: 'o-3' })).rejects.toThrow(/^No @Job handler is registered for "orders.confirm-shared";/);

    const listing = await start({ worker: false, jobs: [ConfirmOrder] });
    const client = listing.get(SchedulerClient);
    const { id } = await client.enqueue('orders.confirm-shared', { orderId: 'o-3' }, { delayMs: 60_000 });
    expect(await client.get(id)).toMatchObject({ queue: 'orders', maxAttempts: 3, concurrencyKey: 'order:o-3' });
    const schedule = await client.schedule({ name: 'orders.confirm-shared', everyMs: 3_600_000, payload: { orderId: 'o-4' } });
    expect(schedule).toMatchObject({ name: 'orders.confirm-shared', queue: 'orders', maxAttempts: 3 });
  });

  it('issue 19 item 14: a worker that handles the definition runs what the producer enqueued, with the definition retry', async () => {
    const worker = await start({ ...FAST, queues: ['orders'] }, [ConfirmOrderJob]);
    const producer = await start({ worker: false });
    const client = producer.get(SchedulerClient);

    const id = randomUUID();
    const done = settled(worker, id);
    await client.enqueue(ConfirmOrder, { orderId: id }, { id });
    expect(await done).toMatchObject({ status: 'applied', state: 'succeeded' });
    expect(confirmed).toContain(id);

    const retried = randomUUID();
    const failed = settled(worker, retried);
    await client.enqueue(ConfirmOrder, { orderId: retried, failFirst: true }, { id: retried });
    expect(await failed).toMatchObject({ status: 'applied', kind: 'failed', state: 'scheduled' });
    const job = (await client.get(retried))!;
    const failure = (await client.history(retried)).filter((h) => h.state === 'scheduled').pop()!;
    // The definition's retry, as the worker applies it: a fixed 30 s, no jitter.
    expect(job.runAt.getTime() - failure.at.getTime()).toBe(30_000);
    expect(producer.get(SchedulerOrchestrator).node.stats.claimed).toBe(0);
  });
}
