import { Test, type TestingModule } from '@nestjs/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { JobNotFoundError, JobWaitTimeoutError } from 'nestjs-durable-scheduler';
import { SchedulerTester, SchedulerTestingModule } from 'nestjs-durable-scheduler/testing';
import { ExpiredQuotes, ExpireQuoteJob } from './expire-quote.job.js';
import { QuotePriceJob } from './quote-price.job.js';
import { QUOTE_LIFETIME_MS, QuotesService } from './quotes.service.js';

describe('QuotesService', () => {
  let app: TestingModule;
  let quotes: QuotesService;
  let tester: SchedulerTester;

  beforeEach(async () => {
    app = await Test.createTestingModule({
      imports: [SchedulerTestingModule.forRoot()],
      providers: [QuotesService, QuotePriceJob, ExpireQuoteJob, ExpiredQuotes],
    }).compile();
    await app.init();
    quotes = app.get(QuotesService);
    tester = app.get(SchedulerTester);
  });

  afterEach(async () => {
    await app.close();
  });

  it('prices a quote in the background', async () => {
    const jobId = await quotes.request(4);
    await tester.expectEnqueued('quote.price', expect.objectContaining({ items: 4 }));
    await tester.drain();
    expect(await quotes.total(jobId)).toBe(12);
  });

  it('expires a quote once its lifetime is over, without waiting for it', async () => {
    await quotes.expireLater('q-1');
    expect(await tester.drain()).toMatchObject({ attempts: 0, waiting: 1 });
    expect(await tester.drain({ advanceTime: true })).toMatchObject({ succeeded: 1, advancedMs: QUOTE_LIFETIME_MS });
    expect(app.get(ExpiredQuotes).ids).toEqual(['q-1']);
  });

  it('rejects a wait on an unknown job at once', async () => {
    await expect(quotes.total('0190a5a0-0000-7000-8000-00000000f00d')).rejects.toBeInstanceOf(JobNotFoundError);
  });

  it("times a wait out when the test moves the kit's clock past it", async () => {
    const jobId = await quotes.expireLater('q-2');
    const timedOut = expect(quotes.total(jobId, 1_000)).rejects.toBeInstanceOf(JobWaitTimeoutError);
    await tester.advance(1_000);
    await timedOut;
  });
});
