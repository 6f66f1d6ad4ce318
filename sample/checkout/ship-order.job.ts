import type { EntityManager } from 'typeorm';
import { InjectJobEntityManager, Job, type JobContext, type JobHandler } from '../../lib/index.js';
import { Checkout } from './checkout.entity.js';
import { isCheckoutStep, perCustomer, simulatedWork, type CheckoutStep } from './checkout-step.js';

/** Step 3: ships what was reserved and paid for, reading both ancestors' outputs. */
@Job({ name: 'checkout.ship', maxAttempts: 3, validate: isCheckoutStep, ...perCustomer })
export class ShipOrderJob implements JobHandler<CheckoutStep> {
  constructor(@InjectJobEntityManager() private readonly em: EntityManager) {}

  async handle(step: CheckoutStep, ctx: JobContext<CheckoutStep>): Promise<void> {
    const reserved = await ctx.parentOutput<{ reservationId: string }>(step.reserveJobId!);
    const charged = await ctx.parentOutput<{ chargeId: string }>(step.chargeJobId!);
    await simulatedWork();
    const trackingNumber = `trk-${ctx.occurrenceId.slice(0, 8)}`;
    await this.em.update(Checkout, { id: step.checkoutId }, { status: 'shipped', trackingNumber });
    ctx.logger.log(`checkout ${step.checkoutId} shipped (${trackingNumber}) for ${reserved?.reservationId} / ${charged?.chargeId}.`);
  }
}
