import { Injectable } from '@nestjs/common';
import { Job, type JobHandler } from 'nestjs-durable-scheduler';

/** The quotes that expired; a database table in a real application. */
@Injectable()
export class ExpiredQuotes {
  readonly ids: string[] = [];
}

@Job('quote.expire')
export class ExpireQuoteJob implements JobHandler<{ quoteId: string }> {
  constructor(private readonly expired: ExpiredQuotes) {}

  async handle({ quoteId }: { quoteId: string }) {
    this.expired.ids.push(quoteId);
  }
}
