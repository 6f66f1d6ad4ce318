import { afterAll, beforeAll, expect, it } from '@jest/globals';
import type { INestApplicationContext } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { getDataSourceToken, TypeOrmModule, type TypeOrmModuleOptions } from '@nestjs/typeorm';
import type { DataSource, EntityManager } from 'typeorm';
import {
  CapabilityNotSupportedError,
  InjectJobEntityManager,
  Job,
  JobNotFoundError,
  SCHEDULER_STORE,
  SchedulerClient,
  SchedulerModule,
  type JobContext,
  type JobHandler,
  type JobStore,
} from '../../lib/index.js';
import { deferred } from './support.js';

@Job({ name: 'quote.price', maxAttempts: 1 })
class QuotePrice implements JobHandler<{ items: number }> {
  async handle({ items }: { items: number }, ctx: JobContext) {
    ctx.setOutput({ total: items * 3 });
  }
}

/** A handler that waits for a job it enqueued in its own attempt transaction, and reports what the wait said. */
@Job({ name: 'quote.batch', maxAttempts: 1 })
class QuoteBatch implements JobHandler<{ items: number }> {
  constructor(
    @InjectJobEntityManager() private readonly em: EntityManager,
    private readonly client: SchedulerClient,
  ) {}

  async handle({ items }: { items: number }, ctx: JobContext) {
    // A statement through the attempt's EntityManager opens its transaction (on SQLite, lazily).
    await this.em.query('SELECT 1');
    const { id } = await this.client.enqueue('quote.price', { items }, { manager: this.em });
    const outcome = await this.client.waitFor(id, { timeoutMs: 5_000 }).then(
      () => 'resolved',
      (error: { code?: string }) => error.code,
    );
    ctx.setOutput({ outcome });
  }
}

export interface WaitInTransactionTarget {
  /** TypeORM options for a fresh, isolated database. */
  typeorm(): Promise<TypeOrmModuleOptions>;
  /** Scheduler options that isolate its tables. */
  readonly scheduler: { schema?: string; tablePrefix?: string };
  cleanup(): Promise<void>;
}

/**
 * `waitFor` called inside the host's own transaction, the one that enqueued the job, and inside
 * a handler's attempt transaction. Every wait here carries a `timeoutMs`: a wait that does not
 * settle at once fails its case by timing out, never by hanging the run.
 */
export function waitInTransactionCases(open: () => Promise<WaitInTransactionTarget>): void {
  let target: WaitInTransactionTarget;
  let app: INestApplicationContext;
  let client: SchedulerClient;
  let dataSource: DataSource;
  let concurrent: boolean;

  beforeAll(async () => {
    target = await open();
    const moduleRef = await Test.createTestingModule({
      imports: [TypeOrmModule.forRoot(await target.typeorm()), SchedulerModule.forRoot({ ...target.scheduler, pollIntervalMs: 50 })],
      providers: [QuotePrice, QuoteBatch],
    }).compile();
    app = await moduleRef.init();
    client = app.get(SchedulerClient);
    dataSource = app.get<DataSource>(getDataSourceToken());
    concurrent = app.get<JobStore>(SCHEDULER_STORE).capabilities.concurrentTransactions;
  }, 60_000);

  afterAll(async () => {
    await app?.close();
    await target?.cleanup();
  });

  it('issue 35 item 2: a wait inside the transaction that enqueued the job rejects at once with JobNotFoundError, and holds up no other enqueue or wait', async () => {
    // Begun outside the transaction: a wait whose polls need the connection, and an enqueue that needs it.
    const before = await client.enqueue('quote.price', { items: 1 }, { delayMs: 200 });
    const waitBefore = client.waitFor(before.id, { timeoutMs: 30_000 });
    const enqueuedInside = deferred();
    const outside = enqueuedInside.promise.then(() => client.enqueue('quote.price', { items: 5 }));

    const { id, error } = await dataSource.transaction(async (manager) => {
      const { id } = await client.enqueue('quote.price', { items: 2 }, { manager });
      enqueuedInside.resolve();
      const error = await client.waitFor(id, { timeoutMs: 5_000 }).catch((e: unknown) => e);
      return { id, error };
    });
    expect(error).toBeInstanceOf(JobNotFoundError);
    expect(error).toMatchObject({ jobId: id });

    // Committed now: the job exists and runs, and neither the enqueue nor the wait begun outside was lost.
    await expect(client.waitFor(id, { timeoutMs: 30_000 })).resolves.toMatchObject({ state: 'succeeded', output: { total: 6 } });
    await expect(client.waitFor((await outside).id, { timeoutMs: 30_000 })).resolves.toMatchObject({ output: { total: 15 } });
    await expect(waitBefore).resolves.toMatchObject({ output: { total: 3 } });
  });

  it('issue 35 item 2: a handler waiting for a job it enqueued in its attempt transaction gets JobNotFoundError at once', async () => {
    const { id } = await client.enqueue('quote.batch', { items: 3 });
    await expect(client.waitFor(id, { timeoutMs: 30_000 })).resolves.toMatchObject({ state: 'succeeded', output: { outcome: 'JOB_NOT_FOUND' } });
  });

  it('a wait inside a transaction on a job that finished before it resolves with the output', async () => {
    const { id } = await client.enqueue('quote.price', { items: 4 });
    await client.waitFor(id, { timeoutMs: 30_000 });
    const result = await dataSource.transaction(() => client.waitFor(id, { timeoutMs: 5_000 }));
    expect(result).toMatchObject({ jobId: id, state: 'succeeded', output: { total: 12 } });
  });

  it('issue 35 item 2: a wait inside a transaction on a committed job that has not finished is refused at once where transactions take turns', async () => {
    if (concurrent) {
      // PostgreSQL: the worker finishes the job on its own connections while the transaction waits.
      const { id } = await client.enqueue('quote.price', { items: 7 });
      const result = await dataSource.transaction(() => client.waitFor(id, { timeoutMs: 30_000 }));
      expect(result).toMatchObject({ jobId: id, state: 'succeeded', output: { total: 21 } });
      return;
    }
    // Not due yet, so nothing runs it before the wait; and nothing could while the transaction holds the connection.
    const { id } = await client.enqueue('quote.price', { items: 7 }, { delayMs: 3_600_000 });
    const refused = await dataSource.transaction(() => client.waitFor(id, { timeoutMs: 5_000 }).catch((e: unknown) => e));
    expect(refused).toBeInstanceOf(CapabilityNotSupportedError);
    expect((refused as Error).message).toBe(
      `Job ${id} has not finished, and no job can while this code holds the store's only connection inside an open transaction; wait for it after that transaction ends.`,
    );
    await client.runNow(id);
    await expect(client.waitFor(id, { timeoutMs: 30_000 })).resolves.toMatchObject({ output: { total: 21 } });
  });
}
