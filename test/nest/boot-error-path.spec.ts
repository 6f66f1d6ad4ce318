import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { Module, type LoggerService } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { InvalidArgumentError, Job, SchedulerModule, type JobHandler } from '../../lib/index.js';
import { MemoryJobStore } from '../../lib/testing/index.js';

/** Records what Nest's logger reports at error level. */
class CapturingLogger implements LoggerService {
  readonly errors: string[] = [];
  error(message: unknown) {
    this.errors.push(message instanceof Error ? `${message.name}: ${message.message}` : String(message));
  }
  log() {}
  warn() {}
  debug() {}
  verbose() {}
}

function appWith(schedule: unknown) {
  @Job({ name: 'reports.nightly', schedule: schedule as never })
  class NightlyReport implements JobHandler {
    async handle() {}
  }
  @Module({ imports: [SchedulerModule.forRoot({ store: new MemoryJobStore(), autoStart: false })], providers: [NightlyReport] })
  class AppModule {}
  return AppModule;
}

const BAD_SCHEDULES: Array<[string, unknown, RegExp]> = [
  ['an invalid cron pattern', { cron: '99 * * * *' }, /cron "99 \* \* \* \*" is not a valid cron pattern/],
  ['an unknown time zone', { cron: '0 3 * * *', timezone: 'Mars/Olympus' }, /timezone must be an IANA time zone/],
  ['an interval under a second', { everyMs: 10 }, /everyMs must be at least 1000/],
  ['a cron pattern given as a string', '0 3 * * *', /it must be an object such as \{ cron: '0 3 \* \* \*' \} or \{ everyMs: 60000 \}, got "0 3 \* \* \*"\.$/],
  ['null', null, /it must be an object such as .*, got null\.$/],
];

describe('issue 19 item 18: a bad @Job({ schedule }) fails the boot through Nest\'s error path', () => {
  const unhandled: unknown[] = [];
  const record = (reason: unknown) => unhandled.push(reason);
  beforeEach(() => {
    unhandled.length = 0;
    process.on('unhandledRejection', record);
  });
  afterEach(() => {
    process.off('unhandledRejection', record);
  });

  it.each(BAD_SCHEDULES)('%s: NestFactory.create rejects with a typed error naming the class, which Nest\'s logger reports', async (_label, schedule, pattern) => {
    const logger = new CapturingLogger();
    const error = await NestFactory.create(appWith(schedule), { abortOnError: false, logger }).then(
      async (app) => {
        // Before the fix create() succeeded, and only init() (inside listen) rejected.
        await app.close();
        return undefined;
      },
      (e: unknown) => e,
    );
    await new Promise((resolve) => setImmediate(resolve));
    expect(error).toBeInstanceOf(InvalidArgumentError);
    const message = (error as Error).message;
    expect(message).toMatch(/^NightlyReport \(@Job 'reports\.nightly'\) declares a bad schedule: /);
    expect(message).toMatch(pattern);
    expect(message).toMatch(/^[^\n]+\.$/);
    expect(logger.errors).toContain(`InvalidArgumentError: ${message}`);
    expect(unhandled).toEqual([]);
  });

  it('NestFactory.createApplicationContext takes the same path', async () => {
    const logger = new CapturingLogger();
    const error = await NestFactory.createApplicationContext(appWith({ cron: 'nope' }), { abortOnError: false, logger }).catch((e: unknown) => e);
    await new Promise((resolve) => setImmediate(resolve));
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect(logger.errors).toContain(`InvalidArgumentError: ${(error as Error).message}`);
    expect(unhandled).toEqual([]);
  });
});
