/** What every checkout job carries: the checkout, its customer, and the ids of the steps before it. */
export interface CheckoutStep {
  readonly checkoutId: string;
  readonly customerId: string;
  /** The reserve-stock job (for charge and ship). */
  readonly reserveJobId?: string;
  /** The charge-payment job (for ship). */
  readonly chargeJobId?: string;
}

/**
 * A checkout's payment method. `declined` makes the charge fail for good, to show the cascade and
 * the dead-letter observer; it lives on the checkout row, not in the payload, so the customer can
 * change it and an operator can replay the dead-lettered charge.
 */
export type PaymentMethod = 'card' | 'declined';

/**
 * One checkout step at a time per customer, cluster-wide: the three jobs share this key, so a
 * customer's second checkout waits for the first one's running step instead of racing it.
 */
export const perCustomer = { concurrencyKey: (step: CheckoutStep) => `customer:${step.customerId}`, concurrencyLimit: 1 } as const;

/** Stands in for a call to a warehouse or payment provider. */
export function simulatedWork(ms = Number(process.env.SAMPLE_STEP_MS ?? 150)): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Accepts only payloads shaped like a checkout step; anything else is quarantined, not retried. */
export function isCheckoutStep(payload: unknown): boolean {
  const step = payload as Partial<CheckoutStep> | null;
  return typeof step?.checkoutId === 'string' && typeof step.customerId === 'string';
}
