/**
 * Compile-time checks of shared job definitions (issue 19 item 14). `npm test` compiles this file
 * with `tsc -p test/types`; every `@ts-expect-error` line must fail to compile, or the build fails.
 */
import { defineJob, Job, SchedulerClient, SchedulerModule, type DefinedJob, type JobContext, type JobHandler, type PayloadOf } from '../../lib/index.js';

export const ResizeImage = defineJob<{ url: string; width: number }>({
  name: 'images.resize',
  queue: 'images',
  maxAttempts: 5,
  retry: { baseDelayMs: 500 },
  concurrencyKey: (payload) => payload.url,
  concurrencyLimit: 2,
});
export const SendMail = defineJob<{ to: string }>({ name: 'mail.deliver' });

// @ts-expect-error concurrencyKey is checked against the definition's payload type
defineJob<{ url: string }>({ name: 'x', concurrencyKey: (payload) => payload.width });
// @ts-expect-error what only a handler has is not part of a definition
defineJob<{ url: string }>({ name: 'x', timeoutMs: 1_000 });
// @ts-expect-error a definition of one payload type is not one of another
export const wrongType: DefinedJob<{ to: string }> = ResizeImage;
// @ts-expect-error a plain object is not a definition
export const notDefined: DefinedJob<{ to: string }> = { name: 'mail.deliver' };

@Job(ResizeImage)
export class ResizeImageJob implements JobHandler<PayloadOf<typeof ResizeImage>> {
  async handle(payload: { url: string; width: number }, ctx: JobContext) {
    return `${payload.url}@${payload.width}:${ctx.attempt}`;
  }
}

@Job(SendMail, { timeoutMs: 30_000, transaction: false, validate: (p) => typeof p === 'object', schedule: { everyMs: 60_000, payload: { to: 'ops@example.com' } } })
export class SendMailJob implements JobHandler<PayloadOf<typeof SendMail>> {
  async handle(payload: { to: string }) {
    return payload.to;
  }
}

// @ts-expect-error a handler whose payload type does not match its definition
@Job(SendMail)
export class WrongPayloadJob implements JobHandler<{ url: string }> {
  async handle(payload: { url: string }) {
    return payload.url;
  }
}

// @ts-expect-error a handler cannot change its definition's queue (producers would not see it)
@Job(SendMail, { queue: 'other' })
export class RequeuedJob {
  async handle() {}
}

// @ts-expect-error a declared schedule's payload follows the definition
@Job(SendMail, { schedule: { everyMs: 60_000, payload: { url: 'x' } } })
export class BadScheduleJob {
  async handle(payload: { to: string }) {
    return payload.to;
  }
}

export async function produce(client: SchedulerClient) {
  await client.enqueue(ResizeImage, { url: 'a.png', width: 100 });
  await client.enqueue(SendMail, { to: 'a@example.com' }, { delayMs: 1_000, queue: 'mail' });
  // @ts-expect-error a payload of the wrong shape
  await client.enqueue(ResizeImage, { url: 'a.png' });
  // @ts-expect-error another definition's payload
  await client.enqueue(SendMail, { url: 'a.png', width: 1 });
  await client.enqueueMany([
    { job: ResizeImage, payload: { url: 'b.png', width: 10 } },
    { job: SendMail, payload: { to: 'b@example.com' }, delayMs: 10 },
    // By name, typed by the JobRegistry (job-registry.types.ts).
    { name: 'orders.confirm', payload: { orderId: 'o-1' } },
  ]);
  // @ts-expect-error a batch entry whose payload belongs to another definition
  await client.enqueueMany([{ job: SendMail, payload: { url: 'c.png', width: 1 } }]);
  // @ts-expect-error a by-name entry in a mixed batch is still checked against its name
  await client.enqueueMany([{ job: SendMail, payload: { to: 'x' } }, { name: 'orders.confirm', payload: { to: 'x' } }]);
  await client.schedule({ job: SendMail, everyMs: 60_000, payload: { to: 'ops@example.com' } });
  // @ts-expect-error a schedule's payload follows its definition
  await client.schedule({ job: SendMail, everyMs: 60_000, payload: { url: 'x' } });
}

export const producerOnly = SchedulerModule.forRoot({ worker: false, jobs: [ResizeImage, SendMail] });
// @ts-expect-error jobs takes definitions, not plain objects
export const plainJobs = SchedulerModule.forRoot({ jobs: [{ name: 'images.resize' }] });
