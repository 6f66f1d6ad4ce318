import type { EntityManager } from 'typeorm';
import { InjectJobEntityManager, Job, PermanentJobError, type JobContext, type JobHandler } from '../../lib/index.js';
import { Checkout } from './checkout.entity.js';
import { isCheckoutStep, perCustomer, simulatedWork, type CheckoutStep } from './checkout-step.js';

/** Step 2: runs once the stock is reserved, and charges for that reservation. */
@Job({ name: 'checkout.charge', maxAttempts: 3, validate: isCheckoutStep, ...perCustomer })
export class ChargePaymentJob implements JobHandler<CheckoutStep> {
  constructor(@InjectJobEntityManager() private readonly em: EntityManager) {}

  async handle(step: CheckoutStep, ctx: JobContext<CheckoutStep>): Promise<void> {
    const reserved = await ctx.parentOutput<{ reservationId: string }>(step.reserveJobId!);
    // Read from the row at each run: after the customer changes a declined card, a replay charges the new one.
    const { paymentMethod } = await this.em.findOneByOrFail(Checkout, { id: step.checkoutId });
    await simulatedWork();
    if (paymentMethod === 'declined') throw new PermanentJobError('the card was declined');
    // The occurrence id doubles as the payment provider's idempotency key.
    const chargeId = `ch-${ctx.occurrenceId.slice(0, 8)}`;
    await this.em.update(Checkout, { id: step.checkoutId }, { status: 'charged', chargeId });
    ctx.setOutput({ chargeId, reservationId: reserved?.reservationId });
    ctx.logger.log(`checkout ${step.checkoutId} charged (${chargeId}) for ${reserved?.reservationId}.`);
  }
}
