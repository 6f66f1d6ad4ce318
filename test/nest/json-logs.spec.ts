import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { ConsoleLogger, type INestApplicationContext } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { Job, SchedulerClient, SchedulerModule, type JobContext, type JobHandler } from '../../lib/index.js';
import { MemoryJobStore, SystemClock } from '../../lib/testing/index.js';
import { settled } from './support.js';

const SECRET = 'card 4111-1111-1111-1111';

@Job({ name: 'logs.flaky', retry: { baseDelayMs: 0, jitter: false } })
class Flaky implements JobHandler<{ card: string }> {
  async handle(_payload: { card: string }, ctx: JobContext<{ card: string }>) {
    ctx.logger.log('charging the card');
    if (ctx.attempt === 1) throw new Error('the bank timed out');
  }
}

let app: INestApplicationContext | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
  jest.restoreAllMocks();
});

describe("log lines under Nest's JSON logger", () => {
  it('carry the job id, name, attempt and queue as fields, never the payload', async () => {
    const lines: string[] = [];
    jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => (lines.push(String(chunk)), true));
    const moduleRef = await Test.createTestingModule({
      imports: [SchedulerModule.forRoot({ store: new MemoryJobStore({ clock: new SystemClock() }), pollIntervalMs: 10, heartbeatIntervalMs: 1_000, leaseMs: 5_000 })],
      providers: [Flaky],
    }).compile();
    moduleRef.useLogger(new ConsoleLogger({ json: true }));
    app = await moduleRef.init();
    const { id } = await app.get(SchedulerClient).enqueue('logs.flaky', { card: SECRET });
    await settled(app, id, (event) => event.attempt === 2);
    const records = lines.flatMap((line) => line.split('\n')).filter(Boolean).map((line) => JSON.parse(line) as Record<string, any>);
    const fields = { jobId: id, jobName: 'logs.flaky', queue: 'default' };
    const failed = records.find((r) => /attempt 1 of 10 failed/.test(r.message))!;
    expect(failed).toMatchObject({ level: 'warn', context: 'DurableScheduler', params: { ...fields, attempt: 1 } });
    const handlerLines = records.filter((r) => /charging the card$/.test(r.message));
    expect(handlerLines.map((r) => r.params)).toEqual([
      { ...fields, attempt: 1 },
      { ...fields, attempt: 2 },
    ]);
    // The card number as the payload holds it: four digits alone also match a pid (24111) or a timestamp.
    expect(JSON.stringify(records)).not.toContain('4111-1111-1111-1111');
  });
});
