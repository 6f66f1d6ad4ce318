import { describe, expect, it } from '@jest/globals';
import { Test } from '@nestjs/testing';
import type { DataSource } from 'typeorm';
import { InvalidArgumentError, Job, SchedulerModule, type JobHandler, type SchedulerModuleOptions } from '../../lib/index.js';
import { MemoryJobStore } from '../../lib/testing/index.js';

@Job('orders.confirm')
class ConfirmA implements JobHandler {
  async handle() {}
}

@Job('orders.confirm')
class ConfirmB implements JobHandler {
  async handle() {}
}

class NoHandle {}
// The compile-time check refuses this class (no handle method); apply the decorator by hand to prove the runtime check.
(Job('mail.send') as (target: unknown) => void)(NoHandle);

@Job({ name: 'reports.build', queue: 'reports' })
class ReportOnOtherQueue implements JobHandler {
  async handle() {}
}

@Job({ name: 'bad.attempts', maxAttempts: 0 })
class BadAttempts implements JobHandler {
  async handle() {}
}

async function boot(options: SchedulerModuleOptions, providers: unknown[] = []) {
  const moduleRef = await Test.createTestingModule({
    imports: [SchedulerModule.forRoot({ store: new MemoryJobStore(), autoStart: false, ...options })],
    providers: providers as never,
  }).compile();
  const app = await moduleRef.init();
  await app.close();
}

async function bootError(options: SchedulerModuleOptions, providers: unknown[] = []): Promise<Error> {
  const error = await boot(options, providers).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(InvalidArgumentError);
  expect((error as Error).message).toMatch(/^[^\n]+\.$/);
  return error as Error;
}

describe('SchedulerModule boot errors', () => {
  it('names both classes when two claim one wire name', async () => {
    const error = await bootError({}, [ConfirmA, ConfirmB]);
    expect(error.message).toBe(
      'The job name "orders.confirm" is claimed by both ConfirmA and ConfirmB; each wire name needs exactly one handler class.',
    );
  });

  it('names the class that has no handle method', async () => {
    const error = await bootError({}, [NoHandle]);
    expect(error.message).toBe("NoHandle is decorated with @Job('mail.send') but has no handle(payload, context) method.");
  });

  it('refuses a handler on a queue the module does not consume', async () => {
    const error = await bootError({ queues: ['default', 'mail'] }, [ReportOnOtherQueue]);
    expect(error.message).toBe(
      'ReportOnOtherQueue (@Job \'reports.build\') uses the queue "reports", which this module does not consume; add it to queues (default, mail).',
    );
    await expect(boot({ queues: ['reports'] }, [ReportOnOtherQueue])).resolves.toBeUndefined();
  });

  it('refuses a lease that does not cover two heartbeats', async () => {
    const error = await bootError({ leaseMs: 15_000, heartbeatIntervalMs: 10_000 });
    expect(error.message).toBe(
      'leaseMs (15000) must cover at least two heartbeats (2 × heartbeatIntervalMs = 20000), or one late heartbeat loses the lease.',
    );
  });

  it.each<[string, SchedulerModuleOptions, RegExp]>([
    ['a concurrency below 1', { concurrency: 0 }, /^concurrency must be a whole number from 1 to 10000, got 0\.$/],
    ['a fractional poll interval', { pollIntervalMs: 0.5 }, /^pollIntervalMs must be a whole number/],
    ['no queues', { queues: [] }, /^queues must be a non-empty array/],
    ['a hostile queue name', { queues: ["x'; drop"] }, /^queues\[0\] must be 1 to 64 characters/],
    ['a negative retry base', { retry: { baseDelayMs: -1 } }, /^retry.baseDelayMs must be/],
    ['maxAttempts of 0', { maxAttempts: 0 }, /^maxAttempts must be a whole number from 1/],
  ])('refuses %s', async (_label, options, pattern) => {
    expect((await bootError(options)).message).toMatch(pattern);
  });

  it('refuses bad @Job options, naming the class and the job', async () => {
    expect((await bootError({}, [BadAttempts])).message).toMatch(/^BadAttempts \(@Job 'bad.attempts'\) maxAttempts must be a whole number from 1 to 10000, got 0\.$/);
  });

  it('refuses a DataSource type it has no store for, and a missing DataSource', async () => {
    const mongo = { options: { type: 'mongodb' }, isInitialized: true } as unknown as DataSource;
    const moduleRef = Test.createTestingModule({ imports: [SchedulerModule.forRoot({ dataSource: mongo, autoStart: false })] });
    await expect(moduleRef.compile()).rejects.toThrow(
      'SchedulerModule supports PostgreSQL ("postgres"), MySQL ("mysql"), MariaDB ("mariadb") and SQLite ("better-sqlite3") DataSources, not "mongodb"; pass a store option for anything else.',
    );
    // A MySQL DataSource whose driver is not mysql2 (here: none at all) is refused at boot, in one sentence.
    const driverless = { options: { type: 'mysql' }, isInitialized: true } as unknown as DataSource;
    await expect(Test.createTestingModule({ imports: [SchedulerModule.forRoot({ dataSource: driverless, autoStart: false })] }).compile()).rejects.toThrow(
      'The MySQL store needs a DataSource of type "mysql" or "mariadb" whose driver is mysql2 (npm install mysql2), got type "mysql".',
    );
    await expect(Test.createTestingModule({ imports: [SchedulerModule.forRoot({ autoStart: false })] }).compile()).rejects.toThrow(
      'SchedulerModule found no TypeORM DataSource; import TypeOrmModule.forRoot(...) or pass a store or dataSource option.',
    );
  });
});
