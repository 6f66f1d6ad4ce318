import { describe, expect, it } from '@jest/globals';
import { Test } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { Job, SchedulerClient, SchedulerModule, SchedulerOrchestrator, type JobContext, type JobHandler } from '../../lib/index.js';
import { deferred, tempSqlite } from './support.js';

const started = deferred();
const aborted = deferred<unknown>();

@Job('stubborn')
class StubbornHandler implements JobHandler {
  async handle(_payload: unknown, ctx: JobContext) {
    ctx.signal.addEventListener('abort', () => aborted.resolve(ctx.signal.reason));
    started.resolve();
    // Ignores the abort on purpose: shutdown must not wait for it forever.
    await new Promise(() => undefined);
  }
}

@Job('quick')
class QuickHandler implements JobHandler {
  async handle() {}
}

describe('graceful shutdown', () => {
  it('stops claiming, waits out the grace period, then aborts and hands unfinished attempts back', async () => {
    const sqlite = tempSqlite();
    const moduleRef = await Test.createTestingModule({
      imports: [
        TypeOrmModule.forRoot({ type: 'better-sqlite3', database: sqlite.database }),
        SchedulerModule.forRoot({ pollIntervalMs: 20, heartbeatIntervalMs: 1_000, leaseMs: 60_000, shutdownGraceMs: 200 }),
      ],
      providers: [StubbornHandler, QuickHandler],
    }).compile();
    const app = await moduleRef.init();
    const client = app.get(SchedulerClient);
    const node = app.get(SchedulerOrchestrator).node;
    const { id } = await client.enqueue('stubborn', {}, { maxAttempts: 5 });
    await started.promise;

    // What app.close() does in beforeApplicationShutdown; called directly so the drain's start is observable.
    const stopping = app.get(SchedulerOrchestrator).stop();
    expect(node.status).toBe('draining');
    // Once draining, newly due work stays put for the next node.
    const late = await client.enqueue('quick', {});
    await stopping;
    await app.close();
    expect(await aborted.promise).toBe('shutdown');
    expect(node.stats.relinquished).toBe(1);
    expect(node.status).toBe('stopped');

    const check = await new DataSource({ type: 'better-sqlite3', database: sqlite.database }).initialize();
    const [job] = await check.query(`SELECT state, attempt, worker_id, run_at, updated_at FROM durable_scheduler_jobs WHERE id = ?`, [id]);
    expect(job).toMatchObject({ state: 'scheduled', attempt: 1, worker_id: null });
    expect(job.run_at).toBe(job.updated_at); // due again at once, no backoff
    expect(await check.query(`SELECT state FROM durable_scheduler_jobs WHERE id = ?`, [late.id])).toEqual([{ state: 'scheduled' }]);
    await check.destroy();
    sqlite.cleanup();
  });
});
