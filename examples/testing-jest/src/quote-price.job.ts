import { Job, type JobContext, type JobHandler } from 'nestjs-durable-scheduler';

/** Prices a quote: three per item. */
@Job('quote.price')
export class QuotePriceJob implements JobHandler<{ items: number }> {
  async handle({ items }: { items: number }, ctx: JobContext) {
    ctx.setOutput({ total: items * 3 });
  }
}
