import { describe, expect, it } from '@jest/globals';
import { Module, type LoggerService } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { DataSource } from 'typeorm';
import { PostgresJobStore, SchedulerModule, SchedulerOrchestrator, type StoreCapabilities } from '../../lib/index.js';
import { MemoryJobStore } from '../../lib/testing/index.js';

/** Records what Nest's logger reports at warn level. */
class CapturingLogger implements LoggerService {
  readonly warnings: string[] = [];
  warn(message: unknown) {
    this.warnings.push(String(message));
  }
  log() {}
  error() {}
  debug() {}
  verbose() {}
}

/** An in-memory store that declares a connection pool, as the PostgreSQL store does. */
function pooledStore(size: number | undefined): MemoryJobStore {
  const store = new MemoryJobStore();
  const capabilities: StoreCapabilities = { ...store.capabilities, ...(size === undefined ? {} : { connectionPool: { size } }) };
  Object.defineProperty(store, 'capabilities', { value: capabilities });
  return store;
}

async function warningsAtStart(store: MemoryJobStore): Promise<string[]> {
  @Module({ imports: [SchedulerModule.forRoot({ store, autoStart: false, concurrency: 10 })] })
  class AppModule {}
  const logger = new CapturingLogger();
  const app = await NestFactory.createApplicationContext(AppModule, { logger });
  try {
    await app.get(SchedulerOrchestrator).start();
    return logger.warnings;
  } finally {
    await app.close();
  }
}

describe('the connection pool is a declared store capability', () => {
  it('warns at start when the declared pool is smaller than the worker can need', async () => {
    expect(await warningsAtStart(pooledStore(5))).toContain(
      'the DataSource pool holds 5 connections but this worker can need 13 (concurrency 10 + heartbeat + LISTEN + one for claims and outcomes); raise extra.max or lower concurrency.',
    );
  });

  it('says nothing when the pool is large enough, or when the store declares none', async () => {
    expect((await warningsAtStart(pooledStore(13))).filter((w) => w.includes('pool holds'))).toEqual([]);
    expect((await warningsAtStart(pooledStore(undefined))).filter((w) => w.includes('pool holds'))).toEqual([]);
  });

  it('is declared by the PostgreSQL store from its pool, with the size poolSize reports', () => {
    const dataSource = { options: { type: 'postgres' }, isInitialized: true, driver: { master: { options: { max: 7 } } } } as unknown as DataSource;
    const store = new PostgresJobStore({ dataSource });
    expect(store.capabilities.connectionPool).toEqual({ size: 7 });
    expect(store.poolSize).toBe(7);
    expect(new MemoryJobStore().capabilities.connectionPool).toBeUndefined();
  });
});
