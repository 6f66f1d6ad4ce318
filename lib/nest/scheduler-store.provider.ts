import type { FactoryProvider, InjectionToken } from '@nestjs/common';
import { getDataSourceToken } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { InvalidArgumentError } from '../core/index.js';
import { PostgresJobStore, SqliteJobStore, type JobStore } from '../store/index.js';
import type { SchedulerModuleOptions } from './interfaces/scheduler-module-options.interface.js';
import { NO_DATA_SOURCE, UNSUPPORTED_DATA_SOURCE } from './scheduler.messages.js';
import { SCHEDULER_STORE } from './scheduler.tokens.js';

/** Picks the adapter for a DataSource by its driver type. */
export function createStore(options: SchedulerModuleOptions, dataSource: DataSource | undefined, dataSourceName?: string): JobStore {
  if (options.store) return options.store;
  if (!dataSource) throw new InvalidArgumentError(NO_DATA_SOURCE(dataSourceName), 'dataSource');
  const type = String(dataSource.options.type);
  if (type === 'postgres') {
    return new PostgresJobStore({ dataSource, schema: options.schema, tablePrefix: options.tablePrefix, limits: options.limits, historyPolicy: options.historyPolicy });
  }
  if (type === 'better-sqlite3') {
    return new SqliteJobStore({ dataSource, tablePrefix: options.tablePrefix, limits: options.limits, historyPolicy: options.historyPolicy });
  }
  throw new InvalidArgumentError(UNSUPPORTED_DATA_SOURCE(type), 'dataSource');
}

/**
 * The store, built on the application's DataSource (or the `store` option) and migrated at boot.
 * The DataSource is injected optionally, so an explicit store needs no TypeORM at all.
 */
export function schedulerStoreProvider(dataSourceName: string | undefined, optionsToken: InjectionToken): FactoryProvider<JobStore> {
  return {
    provide: SCHEDULER_STORE,
    inject: [optionsToken, { token: getDataSourceToken(dataSourceName), optional: true }],
    useFactory: async (options: SchedulerModuleOptions, registered?: DataSource) => {
      const store = createStore(options, options.dataSource ?? registered, dataSourceName);
      if (options.migrationsRun !== false) await store.migrate();
      return store;
    },
  };
}
