import { Injectable } from '@nestjs/common';
import { SchedulerClient } from 'nestjs-durable-scheduler';

export const QUOTE_LIFETIME_MS = 30 * 86_400_000;

@Injectable()
export class QuotesService {
  constructor(private readonly scheduler: SchedulerClient) {}

  /** Prices a quote in the background; resolves with the job's id. */
  async request(items: number): Promise<string> {
    const { id } = await this.scheduler.enqueue('quote.price', { items });
    return id;
  }

  /** Expires a quote once its lifetime is over. */
  async expireLater(quoteId: string): Promise<string> {
    const { id } = await this.scheduler.enqueue('quote.expire', { quoteId }, { delayMs: QUOTE_LIFETIME_MS });
    return id;
  }

  /** The quote's total, once its job ran. */
  async total(jobId: string, timeoutMs = 5_000): Promise<number> {
    const { output } = await this.scheduler.waitFor(jobId, { timeoutMs });
    return (output as { total: number }).total;
  }
}
