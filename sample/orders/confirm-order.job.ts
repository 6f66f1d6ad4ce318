import type { EntityManager } from 'typeorm';
import { InjectJobEntityManager, Job, type JobContext, type JobHandler } from '../../lib/index.js';
import { OrderConfirmation } from './order-confirmation.entity.js';
import { Order } from './order.entity.js';

type Payload = { orderId: string; failFirstAttempt?: boolean };

/**
 * Confirms an order. Its writes go through the attempt's EntityManager, so they commit together
 * with the job's success, and they are idempotent on the occurrence id: if this job ever runs
 * twice, the second run finds its confirmation and does nothing (the primary key guards a race).
 */
@Job('orders.confirm')
export class ConfirmOrderJob implements JobHandler<Payload> {
  constructor(@InjectJobEntityManager() private readonly em: EntityManager) {}

  async handle({ orderId, failFirstAttempt }: Payload, ctx: JobContext<Payload>): Promise<void> {
    if (failFirstAttempt && ctx.attempt === 1) throw new Error('the warehouse did not answer; the retry will');
    if (await this.em.existsBy(OrderConfirmation, { occurrenceId: ctx.occurrenceId })) {
      ctx.logger.log(`occurrence ${ctx.occurrenceId} was already confirmed; nothing to do.`);
      return;
    }
    await this.em.insert(OrderConfirmation, { occurrenceId: ctx.occurrenceId, orderId, attempt: ctx.attempt });
    await this.em.update(Order, { id: orderId }, { status: 'confirmed' });
    ctx.setOutput({ confirmed: orderId });
    ctx.logger.log(`order ${orderId} confirmed.`);
  }
}
