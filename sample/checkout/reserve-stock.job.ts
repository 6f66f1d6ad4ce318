import type { EntityManager } from 'typeorm';
import { InjectJobEntityManager, Job, PermanentJobError, type JobContext, type JobHandler } from '../../lib/index.js';
import { Checkout } from './checkout.entity.js';
import { isCheckoutStep, perCustomer, simulatedWork, type CheckoutStep } from './checkout-step.js';

/** Step 1: holds the item. Its output (the reservation) is what the later steps read. */
@Job({ name: 'checkout.reserve', maxAttempts: 3, validate: isCheckoutStep, ...perCustomer })
export class ReserveStockJob implements JobHandler<CheckoutStep> {
  constructor(@InjectJobEntityManager() private readonly em: EntityManager) {}

  async handle(step: CheckoutStep, ctx: JobContext<CheckoutStep>): Promise<void> {
    await simulatedWork();
    const checkout = await this.em.findOneByOrFail(Checkout, { id: step.checkoutId });
    if (checkout.item === 'unobtainium') throw new PermanentJobError(`no stock of ${checkout.item}`);
    // Derived from the occurrence id, so a second run of this job reserves the same thing.
    const reservationId = `rsv-${ctx.occurrenceId.slice(0, 8)}`;
    await this.em.update(Checkout, { id: step.checkoutId }, { status: 'reserved', reservationId });
    ctx.setOutput({ reservationId });
    ctx.logger.log(`checkout ${step.checkoutId} reserved ${checkout.item} (${reservationId}).`);
  }
}
