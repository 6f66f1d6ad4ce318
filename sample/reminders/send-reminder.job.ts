import type { EntityManager } from 'typeorm';
import { InjectJobEntityManager, Job, type JobContext, type JobHandler } from '../../lib/index.js';
import { ReminderDelivery } from './reminder-delivery.entity.js';

type Payload = { text: string };

/**
 * Delivers a reminder. The same code serves one-shot reminders (POST /reminders) and the recurring
 * one below. It dedupes on the occurrence id: an occurrence already recorded is discarded, and the
 * primary key stops two concurrent runs of one occurrence from both recording it (the second insert
 * fails, its attempt rolls back and retries, and then finds the row).
 */
async function deliver(em: EntityManager, { text }: Payload, ctx: JobContext<Payload>): Promise<void> {
  if (await em.existsBy(ReminderDelivery, { occurrenceId: ctx.occurrenceId })) {
    ctx.logger.log(`occurrence ${ctx.occurrenceId} was already delivered; discarding the redelivery.`);
    return;
  }
  await em.insert(ReminderDelivery, { occurrenceId: ctx.occurrenceId, text, scheduledFor: ctx.scheduledFor.toISOString() });
  ctx.logger.log(`REMINDER "${text}" (occurrence ${ctx.occurrenceId}, due ${ctx.scheduledFor.toISOString()}).`);
}

@Job('reminders.send')
export class SendReminderJob implements JobHandler<Payload> {
  constructor(@InjectJobEntityManager() private readonly em: EntityManager) {}

  handle(payload: Payload, ctx: JobContext<Payload>): Promise<void> {
    return deliver(this.em, payload, ctx);
  }
}

/** A recurring reminder, declared on the handler: every minute, on the minute. */
@Job({ name: 'reminders.stretch', schedule: { cron: '* * * * *', timezone: 'UTC', payload: { text: 'Stand up and stretch.' } } })
export class StretchReminderJob implements JobHandler<Payload> {
  constructor(@InjectJobEntityManager() private readonly em: EntityManager) {}

  handle(payload: Payload, ctx: JobContext<Payload>): Promise<void> {
    return deliver(this.em, payload, ctx);
  }
}
