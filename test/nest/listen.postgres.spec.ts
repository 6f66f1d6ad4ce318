import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { INestApplicationContext } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { Job, SCHEDULER_STORE, SchedulerClient, SchedulerModule, type JobHandler, type PostgresJobStore } from '../../lib/index.js';
import { databaseUrl, dropSchemas, openPostgresDataSource, uniqueSchema } from '../support/postgres.js';
import { settled } from './support.js';

@Job('wake.me')
class WakeHandler implements JobHandler {
  async handle() {}
}

describe('LISTEN/NOTIFY wake-up hints on PostgreSQL', () => {
  const schema = uniqueSchema('listen');
  let app: INestApplicationContext;
  let store: PostgresJobStore;

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        TypeOrmModule.forRoot({ type: 'postgres', url: databaseUrl(), extra: { max: 6 } }),
        // Polling an hour apart: within this test, only hints can start a job.
        SchedulerModule.forRoot({ schema, pollIntervalMs: 3_600_000, heartbeatIntervalMs: 1_000, leaseMs: 5_000 }),
      ],
      providers: [WakeHandler],
    }).compile();
    app = await moduleRef.init();
    store = app.get(SCHEDULER_STORE);
    if (store.wakeListener.pid === undefined) await store.wakeListener.nextConnection();
  });

  afterAll(async () => {
    const dataSource = app.get(DataSource);
    await app.close();
    const admin = await openPostgresDataSource(1);
    await dropSchemas(admin, [schema]);
    await admin.destroy();
    expect(dataSource.isInitialized).toBe(false);
  });

  it('starts a job from a hint, without waiting for a poll', async () => {
    const { id } = await app.get(SchedulerClient).enqueue('wake.me', {});
    expect(await settled(app, id)).toMatchObject({ state: 'succeeded' });
  });

  it('reconnects after pg_terminate_backend kills the LISTEN connection, and catches up on what it missed', async () => {
    const dataSource = app.get(DataSource);
    const oldPid = store.wakeListener.pid!;
    const reconnected = store.wakeListener.nextConnection();
    const [{ terminated }] = await dataSource.query('SELECT pg_terminate_backend($1) AS terminated', [oldPid]);
    expect(terminated).toBe(true);
    // Enqueued while the listener may be down: its hint can be lost, so the reconnect must look anyway.
    const { id } = await app.get(SchedulerClient).enqueue('wake.me', { during: 'outage' });
    const done = settled(app, id);
    const newPid = await reconnected;
    expect(newPid).not.toBe(oldPid);
    expect(await done).toMatchObject({ state: 'succeeded' });

    const after = await app.get(SchedulerClient).enqueue('wake.me', { during: 'after' });
    expect(await settled(app, after.id)).toMatchObject({ state: 'succeeded' });
  });
});
