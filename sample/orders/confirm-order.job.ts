import type { EntityManager } from 'typeorm';
import { InjectJobEntityManager, Job, type JobContext, type JobHandler } from '../../lib/index.js';
import { OrderConfirmation } from './order-confirmation.entity.js';
import { Order } from './order.entity.js';

type Payload = { orderId: string };

/**
 * Confirms an order. Its writes go through the attempt's EntityManager, so they commit together
 * with the job's success, and they are idempotent on the occurrence id: if this job ever runs
 * twice, the second insert is ignored and the order stays confirmed once.
 */
@Job('orders.confirm')
export class ConfirmOrderJob implements JobHandler<Payload> {
  constructor(@InjectJobEntityManager() private readonly em: EntityManager) {}

  async handle({ orderId }: Payload, ctx: JobContext<Payload>): Promise<void> {
    const inserted = await this.em
      .createQueryBuilder()
      .insert()
      .into(OrderConfirmation)
      .values({ occurrenceId: ctx.occurrenceId, orderId, attempt: ctx.attempt })
      .orIgnore()
      .execute();
    if (inserted.identifiers.length === 0 || inserted.raw?.changes === 0) {
      ctx.logger.log(`occurrence ${ctx.occurrenceId} was already confirmed; nothing to do.`);
      return;
    }
    await this.em.update(Order, { id: orderId }, { status: 'confirmed' });
    ctx.setOutput({ confirmed: orderId });
    ctx.logger.log(`order ${orderId} confirmed.`);
  }
}
