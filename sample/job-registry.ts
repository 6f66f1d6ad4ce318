import type { CheckoutStep } from './checkout/checkout-step.js';

/**
 * The sample's wire names and payload types. Augmenting JobRegistry makes `@Job` handlers and
 * `SchedulerClient.enqueue` check payloads at compile time. In an application you would write
 * `declare module 'nestjs-durable-scheduler'`; the sample imports the library from source.
 */
declare module '../lib/nest/interfaces/job-registry.interface.js' {
  interface JobRegistry {
    'orders.confirm': { orderId: string; failFirstAttempt?: boolean };
    'reports.flaky': { reportId: string };
    'reminders.send': { text: string };
    'reminders.stretch': { text: string };
    'checkout.reserve': CheckoutStep;
    'checkout.charge': CheckoutStep;
    'checkout.ship': CheckoutStep;
  }
}
