/**
 * Compile-time checks of shared job definitions (issue 19 item 14). `npm test` compiles this file
 * with `tsc -p test/types`; every `@ts-expect-error` line must fail to compile, or the build fails.
 */
import { defineJob, Job, SchedulerClient, SchedulerModule, type DefinedJob, type JobContext, type JobHandler, type PayloadOf, type Rate, type RateLimit, type RateLimitStatus } from '../../lib/index.js';

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

// Rate limits: per concurrency key on a definition or a handler, per queue or key in the module.
export const CallPartner = defineJob<{ partner: string }>({ name: 'partner.call', concurrencyKey: (p) => p.partner, rateLimit: { max: 10, perMs: 1_000 } });
// @ts-expect-error a rate is { max, perMs }
defineJob({ name: 'x', rateLimit: { max: 10, per: 1_000 } });
// @ts-expect-error a rate needs both fields
defineJob({ name: 'x', rateLimit: { max: 10 } });
// @ts-expect-error the rate belongs to the definition, not to a handler of it
@Job(CallPartner, { rateLimit: { max: 1, perMs: 1 } })
export class RateBesideDefinitionJob {
  async handle() {}
}
export const rateLimited = SchedulerModule.forRoot({ rateLimits: [{ queue: 'mail', max: 100, perMs: 60_000 }, { key: 'partner-a', max: 5, perMs: 1_000 }] });
// @ts-expect-error a module rate limit names a queue or a key
export const untargeted = SchedulerModule.forRoot({ rateLimits: [{ max: 100, perMs: 60_000 }] });
export async function operate(client: SchedulerClient) {
  await client.enqueue(SendMail, { to: 'a@example.com' }, { concurrencyKey: 'smtp', rateLimit: { max: 5, perMs: 1_000 } });
  await client.setRateLimit({ queue: 'mail' }, { max: 50, perMs: 60_000 });
  await client.setRateLimit({ key: 'smtp' }, null);
  const limits: RateLimit[] = await client.listRateLimits();
  const status: RateLimitStatus | null = await client.rateLimitStatus({ key: 'smtp' });
  const rate: Rate | undefined = status ?? undefined;
  return [limits, status?.fullUntil, rate?.perMs];
}
