import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Injectable, Module, type INestApplicationContext } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import { Column, DataSource, Entity, PrimaryColumn, type EntityManager } from 'typeorm';
import { InjectJobEntityManager, Job, SchedulerClient, SchedulerModule, type AttemptHook, type JobHandler, type JobRecord } from '../../lib/index.js';
import { settled, tempSqlite } from './support.js';

@Entity('hook_ledger')
class LedgerRow {
  @PrimaryColumn('varchar')
  id!: string;

  @Column('varchar')
  note!: string;
}

interface Payload {
  key: string;
  /** The handler throws after writing. */
  fail?: boolean;
  /** The inner hook throws before calling next(). */
  refuse?: boolean;
  /** The inner hook throws after next() resolved. */
  veto?: boolean;
}

const trail: string[] = [];

@Job({ name: 'ledger.hooked', maxAttempts: 1 })
class LedgerJob implements JobHandler<Payload> {
  constructor(@InjectJobEntityManager() private readonly em: EntityManager) {}

  async handle(payload: Payload) {
    trail.push(`handler ${payload.key}`);
    await this.em.getRepository(LedgerRow).save({ id: payload.key, note: 'written in the attempt' });
    if (payload.fail) throw new Error(`handler failed on ${payload.key}`);
  }
}

const outer: AttemptHook = async (ctx, next) => {
  trail.push(`outer before ${(ctx.payload as Payload).key} attempt ${ctx.attempt} on ${ctx.queue}`);
  try {
    await next();
    trail.push(`outer after ${(ctx.payload as Payload).key}: ok`);
  } catch (error) {
    trail.push(`outer after ${(ctx.payload as Payload).key}: ${(error as Error).message}`);
    throw error;
  }
};

const inner: AttemptHook = async (ctx, next) => {
  const payload = ctx.payload as Payload;
  trail.push(`inner before ${payload.key}`);
  if (payload.refuse) throw new Error(`refused ${payload.key}`);
  await next();
  if (payload.veto) throw new Error(`vetoed ${payload.key}`);
  trail.push(`inner after ${payload.key}`);
};

/** A service a hook uses, handed to the hook by forRootAsync's factory. */
@Injectable()
class AttemptCounter {
  readonly seen: string[] = [];
  readonly hook: AttemptHook = async (ctx, next) => {
    this.seen.push(`${ctx.name} ${ctx.jobId}`);
    await next();
  };
}

@Module({ providers: [AttemptCounter], exports: [AttemptCounter] })
class CounterModule {}

async function boot(database: string, attemptHooks?: 'async' | readonly AttemptHook[]) {
  const scheduler =
    attemptHooks === 'async'
      ? SchedulerModule.forRootAsync({
          imports: [CounterModule],
          inject: [AttemptCounter],
          useFactory: (counter: AttemptCounter) => ({ pollIntervalMs: 20, attemptHooks: [counter.hook] }),
        })
      : SchedulerModule.forRoot({ pollIntervalMs: 20, ...(attemptHooks ? { attemptHooks } : {}) });
  const moduleRef = await Test.createTestingModule({
    imports: [TypeOrmModule.forRoot({ type: 'better-sqlite3', database, entities: [LedgerRow], synchronize: true }), scheduler],
    providers: [LedgerJob],
  }).compile();
  return moduleRef.init();
}

/** Enqueues one job, waits for its outcome, and reports the job and whether its row was kept. */
async function runJob(app: INestApplicationContext, payload: Payload): Promise<{ job: JobRecord; rowKept: boolean }> {
  const { id } = await app.get(SchedulerClient).enqueue('ledger.hooked', payload);
  await settled(app, id);
  const job = (await app.get(SchedulerClient).get(id))!;
  const rowKept = (await app.get(DataSource).getRepository(LedgerRow).findOneBy({ id: payload.key })) !== null;
  return { job, rowKept };
}

/** What the outcome looks like, without ids, times and the error's stack. */
function outcome({ job, rowKept }: { job: JobRecord; rowKept: boolean }) {
  return { state: job.state, attempt: job.attempt, lastError: job.lastError?.split('\n')[0] ?? null, rowKept };
}

describe('attemptHooks, the SchedulerModule option', () => {
  const hookedDb = tempSqlite();
  const bareDb = tempSqlite();
  const asyncDb = tempSqlite();
  let hooked: INestApplicationContext;
  let bare: INestApplicationContext;

  beforeAll(async () => {
    hooked = await boot(hookedDb.database, [outer, inner]);
    bare = await boot(bareDb.database);
  });

  afterAll(async () => {
    await hooked?.close();
    await bare?.close();
    hookedDb.cleanup();
    bareDb.cleanup();
    asyncDb.cleanup();
  });

  it('wraps the handler in registration order, the first outermost, and passes its success through', async () => {
    trail.length = 0;
    const result = await runJob(hooked, { key: 'ok' });
    expect(trail).toEqual(['outer before ok attempt 1 on default', 'inner before ok', 'handler ok', 'inner after ok', 'outer after ok: ok']);
    expect(outcome(result)).toEqual({ state: 'succeeded', attempt: 1, lastError: null, rowKept: true });
  });

  it('passes the handler\'s error through to every hook, and the attempt fails as it would without them', async () => {
    trail.length = 0;
    const result = await runJob(hooked, { key: 'boom', fail: true });
    expect(trail).toEqual(['outer before boom attempt 1 on default', 'inner before boom', 'handler boom', 'outer after boom: handler failed on boom']);
    expect(outcome(result)).toEqual({ state: 'dead_lettered', attempt: 1, lastError: 'Error: handler failed on boom', rowKept: false });
  });

  it('a hook that throws before next() fails the attempt like a handler throw, and the handler never runs', async () => {
    trail.length = 0;
    const result = await runJob(hooked, { key: 'no', refuse: true });
    expect(trail).toEqual(['outer before no attempt 1 on default', 'inner before no', 'outer after no: refused no']);
    expect(outcome(result)).toEqual({ state: 'dead_lettered', attempt: 1, lastError: 'Error: refused no', rowKept: false });
  });

  it('runs inside the attempt\'s transaction: a hook that throws after the handler rolls the handler\'s writes back', async () => {
    trail.length = 0;
    const result = await runJob(hooked, { key: 'veto', veto: true });
    expect(trail).toEqual(['outer before veto attempt 1 on default', 'inner before veto', 'handler veto', 'outer after veto: vetoed veto']);
    expect(outcome(result)).toEqual({ state: 'dead_lettered', attempt: 1, lastError: 'Error: vetoed veto', rowKept: false });
  });

  it('with no hooks, the same jobs end exactly as they do behind hooks that pass results through', async () => {
    const passThrough = [{ key: 'p-ok' }, { key: 'p-boom', fail: true }];
    const withHooks = [];
    for (const payload of passThrough) withHooks.push(outcome(await runJob(hooked, payload)));
    const without = [];
    for (const payload of passThrough) without.push(outcome(await runJob(bare, payload)));
    expect(without).toEqual(withHooks);
    expect(without).toEqual([
      { state: 'succeeded', attempt: 1, lastError: null, rowKept: true },
      { state: 'dead_lettered', attempt: 1, lastError: 'Error: handler failed on p-boom', rowKept: false },
    ]);
  });

  it('forRootAsync builds hooks from injected services', async () => {
    const app = await boot(asyncDb.database, 'async');
    try {
      const { id } = await app.get(SchedulerClient).enqueue('ledger.hooked', { key: 'async' });
      await settled(app, id);
      expect(app.get(AttemptCounter).seen).toEqual([`ledger.hooked ${id}`]);
    } finally {
      await app.close();
    }
  });

  it('refuses attemptHooks that are not functions, and on a node with worker: false', async () => {
    const build = (options: object) => Test.createTestingModule({ imports: [SchedulerModule.forRoot({ pollIntervalMs: 20, ...options })] }).compile();
    await expect(build({ attemptHooks: [outer, 'trace'] })).rejects.toThrow('attemptHooks[1] must be a function (context, next) => Promise<void>, got "trace".');
    await expect(build({ attemptHooks: [outer], worker: false })).rejects.toThrow(
      'attemptHooks wrap the attempts this node runs, but worker is false, so it runs none; register them on a worker node.',
    );
  });
});
