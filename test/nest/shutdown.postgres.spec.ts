import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Test } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { Job, PostgresJobStore, SCHEDULER_STORE, SchedulerModule, type JobHandler } from '../../lib/index.js';
import { DEDICATED_CLOSE_WAIT_MS } from '../../lib/store/postgres/pg-dedicated-client.js';
import { databaseUrl, dropSchemas, openPostgresDataSource, uniqueSchema } from '../support/postgres.js';
import { stallNextListen } from '../support/stall-listen.js';

@Job('listen.stall')
class StallHandler implements JobHandler {
  async handle() {}
}

/** Waits until the server has no backend with `pid` (the connection's end reaches it asynchronously). */
async function backendGone(admin: DataSource, pid: number): Promise<void> {
  for (;;) {
    const rows = await admin.query('SELECT 1 FROM pg_stat_activity WHERE pid = $1', [pid]);
    if (rows.length === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('issue 19 item 3: shutdown never waits on an unbounded await, on PostgreSQL', () => {
  const schema = uniqueSchema('listen_close');
  const storeSchema = uniqueSchema('hb_close');
  let admin: DataSource;

  beforeAll(async () => {
    admin = await openPostgresDataSource(1);
  });

  afterAll(async () => {
    await dropSchemas(admin, [schema, storeSchema]);
    await admin.destroy();
  });

  it('app.close() returns, the DataSource ends, and the LISTEN connection is released from the server', async () => {
    let stall!: ReturnType<typeof stallNextListen>;
    const moduleRef = await Test.createTestingModule({
      imports: [
        TypeOrmModule.forRootAsync({
          useFactory: () => ({ type: 'postgres', url: databaseUrl(), extra: { max: 6 } }),
          dataSourceFactory: async (options) => {
            const dataSource = await new DataSource(options!).initialize();
            stall = stallNextListen(dataSource);
            return dataSource;
          },
        }),
        SchedulerModule.forRoot({ schema, pollIntervalMs: 3_600_000, heartbeatIntervalMs: 1_000, leaseMs: 5_000 }),
      ],
      providers: [StallHandler],
    }).compile();
    const app = await moduleRef.init();
    const store = app.get<PostgresJobStore>(SCHEDULER_STORE);
    const dataSource = app.get(DataSource);

    // The listener's connection is open and checked out, its LISTEN not yet answered.
    const pid = await stall.held;
    expect(await admin.query('SELECT state FROM pg_stat_activity WHERE pid = $1', [pid])).toEqual([{ state: 'idle' }]);
    expect(store.wakeListener.holdsConnection).toBe(true);

    // Before the fix this never returned: the pool waited forever for the listener's connection.
    await app.close();
    expect(dataSource.isInitialized).toBe(false);
    expect(store.wakeListener.holdsConnection).toBe(false);
    await backendGone(admin, pid);

    // The delayed LISTEN arriving now finds nothing to take up again.
    stall.release();
    await new Promise((resolve) => setImmediate(resolve));
    expect(store.wakeListener.holdsConnection).toBe(false);
    expect(store.wakeListener.connections).toBe(0);
  }, 30_000);

  it('store.close() gives up on a heartbeat blocked by a lock, and that connection does not outlive the lock', async () => {
    const dataSource = await openPostgresDataSource(4);
    const store = new PostgresJobStore({ dataSource, schema: storeSchema });
    await store.migrate();
    const { id } = await store.jobEnqueue({ job: { name: 'hb', payload: {} } });
    const [job] = await store.jobClaim({ workerId: 'w', limit: 1, queues: ['default'], leaseMs: 60_000 });
    expect(job!.id).toBe(id);

    // A second connection locks the jobs table, so the heartbeat's UPDATE waits behind it. (A row
    // lock no longer does: a heartbeat passes a row another transaction is writing by.)
    const holder = dataSource.createQueryRunner();
    await holder.connect();
    await holder.startTransaction();
    try {
      await holder.query(`LOCK TABLE "${storeSchema}".jobs IN EXCLUSIVE MODE`);
      const beat = store.jobHeartbeat({ workerId: 'w', leases: [{ jobId: id, attempt: 1 }], leaseMs: 60_000 });
      beat.catch(() => undefined);
      let pid: number | undefined;
      while (pid === undefined) {
        const rows = await admin.query(`SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%renewed AS (%'`);
        pid = rows[0]?.pid;
      }

      const started = Date.now();
      await store.close(); // before the fix this waited for the lock, for as long as it was held
      expect(Date.now() - started).toBeGreaterThanOrEqual(DEDICATED_CLOSE_WAIT_MS - 50);
      await expect(beat).rejects.toThrow();
      // A backend waiting on a lock notices its client left only once it stops waiting.
      await holder.rollbackTransaction();
      await backendGone(admin, pid);
    } finally {
      if (holder.isTransactionActive) await holder.rollbackTransaction();
      await holder.release();
      await dataSource.destroy();
    }
  }, 30_000);
});
