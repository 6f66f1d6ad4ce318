import { afterAll, describe, expect, it } from '@jest/globals';
import { Injectable, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import {
  Job,
  SchedulerClient,
  SchedulerModule,
  type JobHandler,
  type SchedulerModuleOptions,
} from '../../lib/index.js';
import { MemoryJobStore, SystemClock } from '../../lib/testing/index.js';
import { settled, tempSqlite } from './support.js';

@Job('ping')
class PingHandler implements JobHandler<{ n: number }> {
  async handle() {}
}

const FAST = { pollIntervalMs: 50, heartbeatIntervalMs: 1_000, leaseMs: 5_000 };

async function runOnePing(imports: unknown[], providers: unknown[] = [PingHandler]) {
  const moduleRef = await Test.createTestingModule({ imports: imports as never, providers: providers as never }).compile();
  const app = await moduleRef.init();
  try {
    const client = app.get(SchedulerClient);
    const { id } = await client.enqueue('ping', { n: 1 });
    const done = settled(app, id);
    expect(await done).toMatchObject({ status: 'applied', state: 'succeeded' });
    return { app, id };
  } finally {
    await app.close();
  }
}

describe('SchedulerModule.forRootAsync', () => {
  const sqlite = tempSqlite();
  afterAll(() => sqlite.cleanup());

  it('useFactory: options built from injected providers, the store on the injected DataSource', async () => {
    await runOnePing([
      TypeOrmModule.forRoot({ type: 'better-sqlite3', database: sqlite.database }),
      SchedulerModule.forRootAsync({
        inject: [DataSource],
        useFactory: (dataSource: DataSource): SchedulerModuleOptions => ({ ...FAST, dataSource, tablePrefix: 'factory_' }),
      }),
    ]);
    const check = await new DataSource({ type: 'better-sqlite3', database: sqlite.database }).initialize();
    expect(await check.query(`SELECT state FROM factory_jobs`)).toEqual([{ state: 'succeeded' }]);
    await check.destroy();
  });

  it('useClass: an options factory class, here with an explicit in-memory store', async () => {
    const store = new MemoryJobStore({ clock: new SystemClock() });
    @Injectable()
    class SchedulerConfig {
      create(): SchedulerModuleOptions {
        return { ...FAST, store };
      }
    }
    const { id } = await runOnePing([SchedulerModule.forRootAsync({ useClass: SchedulerConfig })]);
    expect((await store.jobGet({ jobId: id }))?.state).toBe('succeeded');
  });

  it('useExisting: options from a provider another module exports, registered globally', async () => {
    const store = new MemoryJobStore({ clock: new SystemClock() });
    @Injectable()
    class SharedConfig {
      create(): SchedulerModuleOptions {
        return { ...FAST, store };
      }
    }
    @Module({ providers: [SharedConfig], exports: [SharedConfig] })
    class ConfigModule {}

    @Injectable()
    class Producer {
      constructor(readonly client: SchedulerClient) {}
    }
    // A module that does not import SchedulerModule still gets the client, because it is global.
    @Module({ providers: [Producer], exports: [Producer] })
    class FeatureModule {}

    const moduleRef = await Test.createTestingModule({
      imports: [ConfigModule, SchedulerModule.forRootAsync({ imports: [ConfigModule], useExisting: SharedConfig, isGlobal: true }), FeatureModule],
      providers: [PingHandler],
    }).compile();
    const app = await moduleRef.init();
    try {
      const { id } = await app.get(Producer).client.enqueue('ping', { n: 2 });
      expect(await settled(app, id)).toMatchObject({ state: 'succeeded' });
      expect((await store.jobGet({ jobId: id }))?.payload).toEqual({ n: 2 });
    } finally {
      await app.close();
    }
  });

  it('dataSourceName: the store uses a named DataSource', async () => {
    const named = tempSqlite();
    try {
      await runOnePing([
        TypeOrmModule.forRoot({ name: 'jobs', type: 'better-sqlite3', database: named.database }),
        SchedulerModule.forRootAsync({ dataSourceName: 'jobs', useFactory: () => FAST }),
      ]);
      const check = await new DataSource({ type: 'better-sqlite3', database: named.database }).initialize();
      expect(await check.query(`SELECT count(*) AS n FROM durable_scheduler_jobs WHERE state = 'succeeded'`)).toEqual([{ n: 1 }]);
      await check.destroy();
    } finally {
      named.cleanup();
    }
  });
});
