import { afterEach, describe, expect, it } from '@jest/globals';
import { Test } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import { Job, SchedulerClient, SchedulerModule, type JobContext, type JobHandler } from '../../lib/index.js';
import { deferred, settled, tempSqlite } from './support.js';

const seen = deferred<{ payload: unknown; attempt: number; occurrenceId: string }>();

@Job('greet')
class GreetHandler implements JobHandler<{ who: string }> {
  async handle(payload: { who: string }, ctx: JobContext) {
    ctx.setOutput({ greeting: `hello ${payload.who}` });
    seen.resolve({ payload, attempt: ctx.attempt, occurrenceId: ctx.occurrenceId });
  }
}

describe('SchedulerModule.forRoot', () => {
  const sqlite = tempSqlite();
  afterEach(() => sqlite.cleanup());

  it('boots on the application DataSource, runs a job end to end and shuts down cleanly', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        TypeOrmModule.forRoot({ type: 'better-sqlite3', database: sqlite.database }),
        SchedulerModule.forRoot({ pollIntervalMs: 50, heartbeatIntervalMs: 1_000, leaseMs: 5_000 }),
      ],
      providers: [GreetHandler],
    }).compile();
    const app = await moduleRef.init();
    try {
      const client = app.get(SchedulerClient);
      const { id, created } = await client.enqueue('greet', { who: 'ada' });
      expect(created).toBe(true);
      const done = settled(app, id);
      const ran = await seen.promise;
      expect(ran).toMatchObject({ payload: { who: 'ada' }, attempt: 1 });
      expect(await done).toMatchObject({ status: 'applied', state: 'succeeded' });
      const job = await client.get(id);
      expect(job).toMatchObject({ state: 'succeeded', output: { greeting: 'hello ada' }, occurrenceId: ran.occurrenceId });
    } finally {
      await app.close();
    }
  });
});
