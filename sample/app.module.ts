import { Module, type DynamicModule } from '@nestjs/common';
import { TypeOrmModule, type TypeOrmModuleOptions } from '@nestjs/typeorm';
import { SchedulerDashboardModule } from '../lib/dashboard/index.js';
import { SchedulerModule, type SchedulerModuleOptions } from '../lib/index.js';
import './job-registry.js';
import { ChargePaymentJob } from './checkout/charge-payment.job.js';
import { CheckoutController } from './checkout/checkout.controller.js';
import { Checkout } from './checkout/checkout.entity.js';
import { CheckoutService } from './checkout/checkout.service.js';
import { DeadLetterLogObserver } from './checkout/dead-letter-log.observer.js';
import { LocalOnlyGuard } from './dashboard/local-only.guard.js';
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

export interface SampleConfig {
  /** A PostgreSQL URL; without one the sample uses SQLite. */
  readonly databaseUrl?: string;
  /** The SQLite file, when there is no PostgreSQL URL. */
  readonly sqliteFile: string;
  readonly scheduler?: Partial<SchedulerModuleOptions>;
}

@Module({})
export class AppModule {
  static forRoot(config: SampleConfig): DynamicModule {
    const database: TypeOrmModuleOptions = config.databaseUrl
      ? { type: 'postgres', url: config.databaseUrl }
      : { type: 'better-sqlite3', database: config.sqliteFile };
    return {
      module: AppModule,
      imports: [
        TypeOrmModule.forRoot({ ...database, entities: [Order, OrderConfirmation, ReminderDelivery, Checkout], synchronize: true }),
        SchedulerModule.forRootAsync({
          isGlobal: true,
          useFactory: (): SchedulerModuleOptions => ({ concurrency: 4, pollIntervalMs: 500, ...config.scheduler }),
        }),
        SchedulerDashboardModule.forRoot({ guards: [LocalOnlyGuard], actor: () => 'sample-operator' }),
      ],
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
        ...(config.scheduler?.worker === false ? [] : [DeadLetterLogObserver]),
      ],
    };
  }
}
