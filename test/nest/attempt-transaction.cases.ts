import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { Column, DataSource, Entity, PrimaryColumn, type EntityManager } from 'typeorm';
import { Test } from '@nestjs/testing';
import { TypeOrmModule, type TypeOrmModuleOptions } from '@nestjs/typeorm';
import type { INestApplicationContext } from '@nestjs/common';
import {
  InjectJobContext,
  InjectJobEntityManager,
  Job,
  SCHEDULER_STORE,
  SchedulerClient,
  SchedulerModule,
  type JobContext,
  type JobHandler,
  type JobStore,
} from '../../lib/index.js';
import { deferred, settled } from './support.js';

@Entity('ledger_entries')
export class LedgerEntry {
  @PrimaryColumn('varchar')
  id!: string;

  @Column('varchar')
  note!: string;
}

/** Test signals shared between the test and the handlers of the current case. */
const signals = {
  started: deferred(),
  proceed: deferred(),
  reset() {
    this.started = deferred();
    this.proceed = deferred();
  },
};

interface LedgerPayload {
  key: string;
  fail?: boolean;
  waitAfterFirstWrite?: boolean;
  waitBeforeWriting?: boolean;
  enqueueChild?: boolean;
  snooze?: boolean;
  progress?: boolean;
}

@Job({ name: 'ledger.write', maxAttempts: 1 })
class LedgerWriter implements JobHandler<LedgerPayload> {
  constructor(
    @InjectJobEntityManager() private readonly em: EntityManager,
    @InjectJobContext() private readonly ctx: JobContext,
    private readonly client: SchedulerClient,
  ) {}

  async handle(payload: LedgerPayload) {
    if (payload.waitBeforeWriting) {
      signals.started.resolve();
      await signals.proceed.promise;
    }
    // One write through a repository (TypeORM opens a savepoint inside the attempt), one through a query builder.
    await this.em.getRepository(LedgerEntry).save({ id: `${payload.key}-1`, note: `attempt ${this.ctx.attempt}` });
    if (payload.waitAfterFirstWrite) {
      signals.started.resolve();
      await signals.proceed.promise;
    }
    await this.em.createQueryBuilder().insert().into(LedgerEntry).values({ id: `${payload.key}-2`, note: 'query builder' }).execute();
    if (payload.enqueueChild) await this.client.enqueue('ledger.noop', { key: payload.key }, { manager: this.em });
    if (payload.fail) throw new Error('handler failed after writing');
    if (payload.progress) await this.ctx.reportProgress({ step: 'written' });
    if (payload.snooze) return this.ctx.snooze(3_600_000);
    return undefined;
  }
}

@Job({ name: 'ledger.noop' })
class NoopHandler implements JobHandler<{ key: string }> {
  async handle() {}
}

/**
 * Claims the job as another worker. A claim passes by a row that another transaction has locked
 * (SKIP LOCKED), and the lapsed attempt's own heartbeat locks it for a moment on its way to finding
 * the lease lost (on MySQL a heartbeat is a transaction of several round trips), so a claim that
 * comes back empty is tried again, a bounded number of times, each after a turn of the event loop.
 */
async function claimOnceFree(store: JobStore, jobId: string) {
  for (let tries = 0; tries < 100; tries += 1) {
    const claimed = await store.jobClaim({ workerId: 'intruder', limit: 1, queues: ['default'], leaseMs: 60_000 });
    if (claimed.length > 0) return claimed.find((job) => job.id === jobId);
    await new Promise((resolve) => setImmediate(resolve));
  }
  return undefined;
}

export interface AttemptTransactionTarget {
  /** TypeORM options for a fresh, isolated database (tables synchronized from the entities). */
  typeorm(): Promise<TypeOrmModuleOptions>;
  /** Scheduler options that isolate its tables. */
  readonly scheduler: { schema?: string; tablePrefix?: string };
  /** Makes the job's lease lapse now, as if time had passed. */
  expireLease(dataSource: DataSource, store: JobStore, jobId: string): Promise<void>;
  /**
   * Makes the lease end at this very instant, by the database's clock: after the attempt's
   * transaction began, before its success is written.
   */
  lapseLeaseNow(dataSource: DataSource, store: JobStore, jobId: string): Promise<void>;
  /** Whether the handler may hold its transaction open while the test writes (false on SQLite: one connection). */
  readonly concurrentWrites: boolean;
  cleanup(): Promise<void>;
}

export function attemptTransactionCases(createTarget: () => Promise<AttemptTransactionTarget>): void {
  let target: AttemptTransactionTarget;
  let app: INestApplicationContext;
  let client: SchedulerClient;
  let dataSource: DataSource;
  let store: JobStore;
  let commits = 0;

  beforeAll(async () => {
    target = await createTarget();
    const moduleRef = await Test.createTestingModule({
      imports: [
        TypeOrmModule.forRoot({ ...(await target.typeorm()), entities: [LedgerEntry], synchronize: true }),
        // No local queue: with its one slot busy the node claims nothing, so the lapsed lease these
        // cases make goes to the test's intruder, not back to this node (claim-ahead-node.cases.ts
        // covers a node that takes its own lapsed job back).
        SchedulerModule.forRoot({ ...target.scheduler, concurrency: 1, claimAhead: 0, pollIntervalMs: 50, heartbeatIntervalMs: 500, leaseMs: 10_000 }),
      ],
      providers: [LedgerWriter, NoopHandler],
    }).compile();
    app = await moduleRef.init();
    client = app.get(SchedulerClient);
    dataSource = app.get(DataSource);
    store = app.get<JobStore>(SCHEDULER_STORE);
    // Count attempt transactions that reached the commit path.
    const begin = store.beginAttempt.bind(store);
    store.beginAttempt = () => {
      const tx = begin();
      const commit = tx.commitSuccess.bind(tx);
      tx.commitSuccess = (...args) => {
        commits += 1;
        return commit(...args);
      };
      return tx;
    };
  });

  afterAll(async () => {
    await app?.close();
    await target?.cleanup();
  });

  const rows = async (key: string) =>
    (await dataSource.getRepository(LedgerEntry).find({ order: { id: 'ASC' } })).filter((r) => r.id.startsWith(`${key}-`)).map((r) => r.id);

  it('commits the handler\'s writes together with the success outcome', async () => {
    const { id } = await client.enqueue('ledger.write', { key: 'ok' });
    expect(await settled(app, id)).toMatchObject({ status: 'applied', state: 'succeeded' });
    expect(await rows('ok')).toEqual(['ok-1', 'ok-2']);
  });

  it('rolls the handler\'s writes back when it throws, before the failure is recorded', async () => {
    const { id } = await client.enqueue('ledger.write', { key: 'thrown', fail: true });
    expect(await settled(app, id)).toMatchObject({ kind: 'failed', status: 'applied', state: 'dead_lettered' });
    expect(await rows('thrown')).toEqual([]);
    expect((await client.get(id))?.lastError).toMatch(/^Error: handler failed after writing/);
  });

  it('rolls the handler\'s writes back when its lease was lost mid-handler and another worker reclaimed the job', async () => {
    signals.reset();
    const payload: LedgerPayload = target.concurrentWrites ? { key: 'lost', waitAfterFirstWrite: true } : { key: 'lost', waitBeforeWriting: true };
    const { id } = await client.enqueue('ledger.write', payload, { maxAttempts: 3 });
    const outcome = settled(app, id);
    await signals.started.promise;
    await target.expireLease(dataSource, store, id);
    const reclaimed = await claimOnceFree(store, id);
    expect(reclaimed).toMatchObject({ id, attempt: 2, workerId: 'intruder' });
    signals.proceed.resolve();
    expect(await outcome).toMatchObject({ attempt: 1, kind: 'succeeded', status: 'stale' });
    expect(await rows('lost')).toEqual([]);
    expect(await client.get(id)).toMatchObject({ state: 'running', attempt: 2, workerId: 'intruder' });
  });

  it('refuses the success when the lease lapsed mid-handler, even though nobody reclaimed the job', async () => {
    // A worker paused past its lease (a GC pause, SIGSTOP) resumes and reports. Its transaction
    // began while the lease was live, but the fence must judge the lease when the success is written.
    signals.reset();
    const payload: LedgerPayload = target.concurrentWrites ? { key: 'lapsed', waitAfterFirstWrite: true } : { key: 'lapsed', waitBeforeWriting: true };
    const { id } = await client.enqueue('ledger.write', payload, { maxAttempts: 3 });
    const first = settled(app, id, (event) => event.attempt === 1);
    const second = settled(app, id, (event) => event.attempt === 2);
    await signals.started.promise;
    await target.lapseLeaseNow(dataSource, store, id);
    signals.proceed.resolve();
    expect(await first).toMatchObject({ kind: 'succeeded', status: 'stale' });
    // The lapsed job is claimed again (attempt 2), and only that attempt's writes exist.
    expect(await second).toMatchObject({ status: 'applied', state: 'succeeded' });
    const notes = await dataSource.getRepository(LedgerEntry).findBy({ id: 'lapsed-1' });
    expect(notes.map((entry) => entry.note)).toEqual(['attempt 2']);
  });

  it('issue 39 item 5: rolls the handler\'s writes back when it snoozes, and reschedules the job with its budget intact', async () => {
    const before = commits;
    const { id } = await client.enqueue('ledger.write', { key: 'snoozed', snooze: true, enqueueChild: true, progress: true });
    expect(await settled(app, id)).toMatchObject({ attempt: 1, kind: 'snoozed', status: 'applied', state: 'scheduled' });
    expect(await rows('snoozed')).toEqual([]);
    expect(commits).toBe(before);
    const job = await client.get(id);
    // The progress it reported inside its transaction is written after the rollback, so it stays.
    expect(job).toMatchObject({ state: 'scheduled', attempt: 1, maxAttempts: 2, snoozes: 1, lastError: null, progress: { step: 'written' } });
    expect(job!.runAt.getTime() - job!.updatedAt.getTime()).toBe(3_600_000);
    expect((await client.list({ name: 'ledger.noop', limit: 10 })).map((j) => j.payload)).not.toContainEqual({ key: 'snoozed' });
  });

  it('commits a job enqueued with the attempt\'s manager only if the attempt commits', async () => {
    const failed = await client.enqueue('ledger.write', { key: 'child-fail', enqueueChild: true, fail: true });
    await settled(app, failed.id);
    const succeeded = await client.enqueue('ledger.write', { key: 'child-ok', enqueueChild: true });
    await settled(app, succeeded.id);
    const children = (await client.list({ name: 'ledger.noop', limit: 10 })).map((job) => job.payload);
    expect(children).toContainEqual({ key: 'child-ok' });
    expect(children).not.toContainEqual({ key: 'child-fail' });
  });

  it('opens no transaction for a handler that never touches the EntityManager', async () => {
    const before = commits;
    const { id } = await client.enqueue('ledger.noop', { key: 'untouched' });
    expect(await settled(app, id)).toMatchObject({ status: 'applied', state: 'succeeded' });
    expect(commits).toBe(before);
    const touched = await client.enqueue('ledger.write', { key: 'touched' });
    await settled(app, touched.id);
    expect(commits).toBe(before + 1);
  });

  it('writes a job inside the caller\'s transaction through SchedulerClient, or not at all', async () => {
    await expect(
      dataSource.transaction(async (manager) => {
        await client.enqueue('ledger.noop', { key: 'host-rollback' }, { manager });
        throw new Error('host rolls back');
      }),
    ).rejects.toThrow('host rolls back');
    const committed = await dataSource.transaction((manager) => client.enqueue('ledger.noop', { key: 'host-commit' }, { manager }));
    await settled(app, committed.id);
    const payloads = (await client.list({ name: 'ledger.noop', limit: 50 })).map((job) => job.payload);
    expect(payloads).toContainEqual({ key: 'host-commit' });
    expect(payloads).not.toContainEqual({ key: 'host-rollback' });
  });
}
