import { describe, expect, it } from '@jest/globals';
import { Test } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import {
  declaredScheduleId,
  InvalidArgumentError,
  Job,
  SchedulerClient,
  SchedulerModule,
  type JobContext,
  type JobHandler,
} from '../../lib/index.js';
import { MemoryJobStore, SystemClock } from '../../lib/testing/index.js';
import { settled, tempSqlite } from './support.js';

const seen: Array<{ scheduledFor: Date; occurrenceId: string; payload: unknown }> = [];

@Job({ name: 'digest.send', schedule: { cron: '0 7 * * *', timezone: 'Europe/Berlin', payload: { edition: 'morning' }, catchUp: 'coalesce' } })
class DigestJob implements JobHandler<{ edition: string }> {
  async handle(payload: { edition: string }, ctx: JobContext) {
    seen.push({ scheduledFor: ctx.scheduledFor, occurrenceId: ctx.occurrenceId, payload });
  }
}

@Job('report.build')
class ReportJob implements JobHandler<{ kind: string }> {
  async handle() {}
}

async function boot(database: string) {
  const moduleRef = await Test.createTestingModule({
    imports: [
      TypeOrmModule.forRoot({ type: 'better-sqlite3', database }),
      SchedulerModule.forRoot({ pollIntervalMs: 50, heartbeatIntervalMs: 1_000, leaseMs: 5_000 }),
    ],
    providers: [DigestJob, ReportJob],
  }).compile();
  return moduleRef.init();
}

describe('recurring schedules in the NestJS module', () => {
  it('registers a declared schedule under an id derived from the wire name, once across boots, and runs its occurrences', async () => {
    const sqlite = tempSqlite();
    const first = await boot(sqlite.database);
    const client = first.get(SchedulerClient);
    const id = declaredScheduleId('digest.send');
    const schedule = await client.getSchedule(id);
    expect(schedule).toMatchObject({
      id,
      name: 'digest.send',
      payload: { edition: 'morning' },
      catchUp: 'coalesce',
      recurrence: { kind: 'cron', cron: '0 7 * * *', timezone: 'Europe/Berlin' },
      state: 'active',
    });
    await first.close();

    // A second node (or a restart) finds the same definition and changes nothing.
    const second = await boot(sqlite.database);
    const client2 = second.get(SchedulerClient);
    expect(await client2.listSchedules()).toEqual([schedule]);
    const { id: jobId } = await client2.triggerSchedule(id);
    expect(await settled(second, jobId)).toMatchObject({ state: 'succeeded' });
    expect(seen.at(-1)).toMatchObject({ occurrenceId: jobId, payload: { edition: 'morning' } });
    await second.close();
    sqlite.cleanup();
  });

  it('creates, pauses, resumes, triggers and removes schedules through the client', async () => {
    const store = new MemoryJobStore({ clock: new SystemClock() });
    const moduleRef = await Test.createTestingModule({
      imports: [SchedulerModule.forRoot({ store, pollIntervalMs: 50, heartbeatIntervalMs: 1_000, leaseMs: 5_000 })],
      providers: [ReportJob],
    }).compile();
    const app = await moduleRef.init();
    try {
      const client = app.get(SchedulerClient);
      const created = await client.schedule({ name: 'report.build', payload: { kind: 'weekly' }, cron: '0 9 * * 1', timezone: 'America/New_York' });
      expect(created).toMatchObject({ name: 'report.build', state: 'active', queue: 'default', maxAttempts: 10 });
      expect((await client.pauseSchedule(created.id)).state).toBe('paused');
      expect((await client.resumeSchedule(created.id)).state).toBe('active');
      const { id } = await client.triggerSchedule(created.id);
      expect(await settled(app, id)).toMatchObject({ state: 'succeeded' });
      expect((await client.get(id))?.scheduleId).toBe(created.id);
      expect(await client.removeSchedule(created.id)).toBe(true);
      expect(await client.listSchedules()).toEqual([]);
      await expect(client.schedule({ name: 'unknown.job' as never, everyMs: 60_000 })).rejects.toThrow(/No @Job handler is registered for "unknown.job"/);
    } finally {
      await app.close();
    }
  });

  it('refuses a handler that declares a bad schedule, naming the class', async () => {
    @Job({ name: 'bad.cron', schedule: { cron: '99 * * * *' } })
    class BadCron implements JobHandler {
      async handle() {}
    }
    // Refused while Nest creates the module's providers (issue 19 item 18), so compile() already fails.
    const error = await Test.createTestingModule({
      imports: [SchedulerModule.forRoot({ store: new MemoryJobStore(), autoStart: false })],
      providers: [BadCron],
    })
      .compile()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect((error as Error).message).toMatch(/^BadCron \(@Job 'bad.cron'\) declares a bad schedule: cron "99 \* \* \* \*" is not a valid cron pattern/);
  });
});
