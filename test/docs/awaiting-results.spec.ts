import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { INestApplication, Type } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { get as httpGet } from 'node:http';
import { join, relative } from 'node:path';
import { Job, SchedulerClient, SchedulerOrchestrator, type JobContext, type JobHandler } from '../../lib/index.js';
import { SchedulerTester, SchedulerTestingModule } from '../../lib/testing/index.js';

@Job({ name: 'quote.price', transaction: false })
class QuotePrice implements JobHandler<{ items: number }> {
  async handle({ items }: { items: number }, ctx: JobContext) {
    ctx.setOutput({ total: items * 3 });
  }
}

@Job({ name: 'quote.refuse', transaction: false, maxAttempts: 1 })
class RefuseQuote implements JobHandler {
  async handle() {
    // A message over two lines, with a control character: only its first line, escaped, may reach a client.
    throw new Error('catalogue closed\u001b[31m for 3 days\nsecond line');
  }
}

/** The `// quotes.controller.ts` block of docs/awaiting-results.md, importing the library's source. */
function controllerSource(root: string, dir: string): string {
  const page = readFileSync(join(root, 'docs/awaiting-results.md'), 'utf8');
  const block = /```ts\n\/\/ quotes\.controller\.ts\n([\s\S]*?)```/.exec(page);
  expect(block).not.toBeNull();
  const lib = relative(dir, join(root, 'lib/index.js'));
  return block![1]!.replace(/from 'nestjs-durable-scheduler'/g, `from '${lib}'`);
}

/**
 * docs/awaiting-results.md's controller, served as the page shows it: what an HTTP client gets
 * for a job that succeeded, failed, is unknown or has a malformed id, or outlasts the wait.
 */
describe('issue 35 item 16: the QuotesController of docs/awaiting-results.md', () => {
  const root = process.cwd();
  const dir = mkdtempSync(join(root, 'test', 'docs', '.awaiting-results-'));
  let app: INestApplication;
  let base: string;

  beforeAll(async () => {
    writeFileSync(join(dir, 'quotes.controller.ts'), controllerSource(root, dir));
    const { QuotesController } = (await import(join(dir, 'quotes.controller.ts'))) as { QuotesController: Type };
    const moduleRef = await Test.createTestingModule({
      imports: [SchedulerTestingModule.forRoot()],
      controllers: [QuotesController],
      providers: [QuotePrice, RefuseQuote],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.listen(0, '127.0.0.1');
    base = await app.getUrl();
  }, 60_000);

  afterAll(async () => {
    await app?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** One request on a connection of its own, closed after it: nothing stays open once the app closes. */
  function get(jobId: string): Promise<{ status: number; body: Record<string, unknown> }> {
    return new Promise((resolve, reject) => {
      const request = httpGet(`${base}/quotes/${encodeURIComponent(jobId)}`, { agent: false }, (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () => resolve({ status: response.statusCode!, body: JSON.parse(text) as Record<string, unknown> }));
      });
      request.on('error', reject);
    });
  }

  it('answers a finished job with its output', async () => {
    const { id } = await app.get(SchedulerClient).enqueue('quote.price', { items: 4 });
    await app.get(SchedulerTester).drain();
    expect(await get(id)).toEqual({ status: 200, body: { status: 'done', output: { total: 12 } } });
  });

  it('issue 35 item 16: answers a failed job with one escaped line of its error, never the stack trace', async () => {
    const { id } = await app.get(SchedulerClient).enqueue('quote.refuse', {});
    await app.get(SchedulerTester).drain();
    // What the store keeps is the whole stack, with file paths: the client must get none of it.
    const stored = (await app.get(SchedulerClient).get(id))!.lastError!;
    expect(stored).toContain('awaiting-results.spec.ts:');
    const { status, body } = await get(id);
    expect({ status, body }).toEqual({ status: 200, body: { status: 'dead_lettered', error: 'Error: catalogue closed\\x1b[31m for 3 days' } });
    expect(JSON.stringify(body)).not.toMatch(/second line|\.ts:\d|\sat\s/);
  });

  it('issue 35 item 16: answers 404 for an id no job has', async () => {
    const { status, body } = await get('0190a5a0-0000-7000-8000-00000000f00d');
    expect(status).toBe(404);
    expect(body).toMatchObject({ statusCode: 404, message: 'No job has this id.' });
  });

  it('issue 35 item 16: answers 400 for a malformed id, without repeating it', async () => {
    const { status, body } = await get('not-a-job\u001b[2J');
    expect(status).toBe(400);
    expect(body).toMatchObject({ statusCode: 400, message: 'The job id must be a UUID.' });
  });

  it("answers pending once the wait's timeout passes, on the kit's clock", async () => {
    const { id } = await app.get(SchedulerClient).enqueue('quote.price', { items: 1 }, { delayMs: 60_000 });
    const answer = get(id);
    // The request's wait is registered once the waiter counts it; then the kit's clock passes its timeout.
    const { waiter } = app.get(SchedulerOrchestrator);
    while (waiter.pending === 0) await new Promise((resolve) => setImmediate(resolve));
    await app.get(SchedulerTester).advance(10_000);
    expect(await answer).toEqual({ status: 200, body: { status: 'pending' } });
  });
});
