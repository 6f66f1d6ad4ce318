import { Module, type DynamicModule } from '@nestjs/common';
import './job-registry.js';
import { ChargePaymentJob } from './checkout/charge-payment.job.js';
import { CheckoutController } from './checkout/checkout.controller.js';
import { Checkout } from './checkout/checkout.entity.js';
import { CheckoutService } from './checkout/checkout.service.js';
import { DeadLetterLogObserver } from './checkout/dead-letter-log.observer.js';
import { ReserveStockJob } from './checkout/reserve-stock.job.js';
import { ShipOrderJob } from './checkout/ship-order.job.js';
import { JobsController } from './jobs/jobs.controller.js';
import { ConfirmOrderJob } from './orders/confirm-order.job.js';
import { OrderConfirmation } from './orders/order-confirmation.entity.js';
import { Order } from './orders/order.entity.js';
import { OrdersController } from './orders/orders.controller.js';
import { OrdersService } from './orders/orders.service.js';
import { FlakyReportJob } from './reports/flaky-report.job.js';
import { ReportsController } from './reports/reports.controller.js';
import { ReminderDelivery } from './reminders/reminder-delivery.entity.js';
import { RemindersController } from './reminders/reminders.controller.js';
import { SendReminderJob, StretchReminderJob } from './reminders/send-reminder.job.js';

/** The sample's TypeORM entities. */
export const SAMPLE_ENTITIES = [Order, OrderConfirmation, ReminderDelivery, Checkout];

/**
 * The sample's own code: controllers, services, `@Job` handlers and the observer. The database and
 * the scheduler come from the importer: `AppModule` in production, the testing kit in
 * `test/sample/sample.kit.spec.ts`, which is why they are not imported here.
 */
@Module({})
export class SampleModule {
  static forRoot(options: { readonly observers: boolean }): DynamicModule {
    return {
      module: SampleModule,
      controllers: [OrdersController, ReportsController, RemindersController, JobsController, CheckoutController],
      providers: [
        OrdersService,
        ConfirmOrderJob,
        FlakyReportJob,
        SendReminderJob,
        StretchReminderJob,
        CheckoutService,
        ReserveStockJob,
        ChargePaymentJob,
        ShipOrderJob,
        // Observers are delivered by worker nodes; a producer-only node (SAMPLE_WORKER=0) has none.
        ...(options.observers ? [DeadLetterLogObserver] : []),
      ],
      exports: [OrdersService, CheckoutService],
    };
  }
}
