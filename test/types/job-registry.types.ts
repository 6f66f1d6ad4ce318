/**
 * Compile-time checks of the typed job registry. `npm test` compiles this file on its own
 * (`tsc -p test/types`); every `@ts-expect-error` line must fail to compile, or the build fails.
 */
import { Job, SchedulerClient, type JobContext, type JobHandler } from '../../lib/index.js';

declare module '../../lib/nest/interfaces/job-registry.interface.js' {
  interface JobRegistry {
    'orders.confirm': { orderId: string };
    'mail.send': { to: string; subject: string };
  }
}

@Job('orders.confirm')
export class ConfirmOrder implements JobHandler<{ orderId: string }> {
  async handle(payload: { orderId: string }, ctx: JobContext) {
    return `${payload.orderId}:${ctx.attempt}`;
  }
}

// @ts-expect-error a handler whose payload type does not match its wire name
@Job('mail.send')
export class WrongPayload implements JobHandler<{ orderId: string }> {
  async handle(payload: { orderId: string }) {
    return payload.orderId;
  }
}

// @ts-expect-error a wire name that is not in the registry
@Job('not.registered')
export class Unregistered {
  async handle() {}
}

// @ts-expect-error a class without a handle method
@Job({ name: 'orders.confirm', maxAttempts: 3 })
export class NoHandle {}

export async function produce(client: SchedulerClient) {
  await client.enqueue('orders.confirm', { orderId: 'o-1' });
  await client.enqueue('mail.send', { to: 'a@example.com', subject: 'hi' }, { delayMs: 1_000 });
  // @ts-expect-error a payload of the wrong shape
  await client.enqueue('orders.confirm', { order: 'o-1' });
  // @ts-expect-error a missing field
  await client.enqueue('mail.send', { to: 'a@example.com' });
  // @ts-expect-error an unknown wire name
  await client.enqueue('orders.cancel', { orderId: 'o-1' });
  await client.enqueueMany([
    { name: 'orders.confirm', payload: { orderId: 'o-2' } },
    { name: 'mail.send', payload: { to: 'b@example.com', subject: 'hello' }, queue: 'default' },
  ]);
  // @ts-expect-error a batch entry whose payload belongs to another name
  await client.enqueueMany([{ name: 'mail.send', payload: { orderId: 'o-3' } }]);

  // Unique jobs and per-enqueue retry (issue 19 items 9 and 10).
  const kept = await client.enqueue('orders.confirm', { orderId: 'o-4' }, { uniqueKey: 'order:o-4', uniqueKeyMode: 'replace', retry: { baseDelayMs: 0 }, maxAttempts: 3 });
  const deduplicated: 'kept' | 'replaced' | 'debounced' | 'throttled' | undefined = kept.deduplicated;
  // Debounce and throttle windows (issue 39 item 4).
  await client.enqueue('orders.confirm', { orderId: 'o-7' }, { debounce: { key: 'order:o-7', windowMs: 1_000, maxDelayMs: 5_000 } });
  await client.enqueue('orders.confirm', { orderId: 'o-8' }, { throttle: { key: 'order:o-8', windowMs: 1_000 } });
  // @ts-expect-error a throttle takes no maxDelayMs
  await client.enqueue('orders.confirm', { orderId: 'o-9' }, { throttle: { key: 'k', windowMs: 1_000, maxDelayMs: 5_000 } });
  await client.enqueueMany([{ name: 'mail.send', payload: { to: 'c@example.com', subject: 'x' }, uniqueKey: 'mail:c', retry: { jitter: false } }]);
  // @ts-expect-error a unique-key mode that does not exist
  await client.enqueue('orders.confirm', { orderId: 'o-5' }, { uniqueKey: 'k', uniqueKeyMode: 'merge' });
  // @ts-expect-error a retry field under the wrong name
  await client.enqueue('orders.confirm', { orderId: 'o-6' }, { retry: { baseMs: 0 } });
  // @ts-expect-error a unique key that is not a string
  await client.enqueue('orders.confirm', { orderId: 'o-7' }, { uniqueKey: 7 });
  return deduplicated;
}
