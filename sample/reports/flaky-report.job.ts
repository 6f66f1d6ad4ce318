import { Job, type JobContext, type JobHandler } from '../../lib/index.js';

type Payload = { reportId: string };

/**
 * Fails on its first two attempts and succeeds on the third, to show retries with backoff in the
 * log. It needs no database writes, so it opts out of the attempt transaction.
 */
@Job({ name: 'reports.flaky', maxAttempts: 5, retry: { baseDelayMs: 500 }, transaction: false })
export class FlakyReportJob implements JobHandler<Payload> {
  async handle({ reportId }: Payload, ctx: JobContext<Payload>): Promise<void> {
    if (ctx.attempt < 3) throw new Error(`report ${reportId}: upstream not ready (attempt ${ctx.attempt})`);
    ctx.setOutput({ reportId, pages: 12 });
    ctx.logger.log(`report ${reportId} built on attempt ${ctx.attempt}.`);
  }
}
