import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { SchedulerClient } from '../../lib/index.js';
import type { PaymentMethod } from './checkout-step.js';
import { Checkout } from './checkout.entity.js';

export interface CheckoutJobs {
  readonly reserve: string;
  readonly charge: string;
  readonly ship: string;
}

@Injectable()
export class CheckoutService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly scheduler: SchedulerClient,
  ) {}

  /**
   * Writes the checkout and its three dependent jobs in one transaction. Caller-chosen job ids let
   * each step name the ones before it, all in one `enqueueMany`.
   */
  async place(customerId: string, item: string, paymentMethod: PaymentMethod): Promise<{ checkoutId: string; jobs: CheckoutJobs }> {
    const checkoutId = randomUUID();
    const jobs: CheckoutJobs = { reserve: randomUUID(), charge: randomUUID(), ship: randomUUID() };
    const step = { checkoutId, customerId };
    await this.dataSource.transaction(async (manager) => {
      await manager.insert(Checkout, { id: checkoutId, customerId, item, paymentMethod });
      await this.scheduler.enqueueMany(
        [
          { name: 'checkout.reserve', id: jobs.reserve, payload: step },
          { name: 'checkout.charge', id: jobs.charge, payload: { ...step, reserveJobId: jobs.reserve }, dependsOn: [jobs.reserve] },
          { name: 'checkout.ship', id: jobs.ship, payload: { ...step, reserveJobId: jobs.reserve, chargeJobId: jobs.charge }, dependsOn: [jobs.charge] },
        ],
        { manager },
      );
    });
    return { checkoutId, jobs };
  }

  /** Changes the payment method; false when there is no such checkout. */
  async changePaymentMethod(checkoutId: string, paymentMethod: PaymentMethod): Promise<boolean> {
    const { affected } = await this.dataSource.getRepository(Checkout).update({ id: checkoutId }, { paymentMethod });
    return (affected ?? 0) > 0;
  }

  find(checkoutId: string) {
    return this.dataSource.getRepository(Checkout).findOneBy({ id: checkoutId });
  }
}
