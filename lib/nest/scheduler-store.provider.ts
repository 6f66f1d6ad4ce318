import type { FactoryProvider, InjectionToken } from '@nestjs/common';
import { getDataSourceToken } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { assertSqlIdentifier, InvalidArgumentError } from '../core/index.js';
import { MysqlJobStore, PostgresJobStore, SqliteJobStore, type JobStore } from '../store/index.js';
import type { SchedulerModuleOptions } from './interfaces/scheduler-module-options.interface.js';
import { checkExplicitStore, POSTGRES_ONLY_OPTIONS } from './scheduler-options.check.js';
import { NO_DATA_SOURCE, POSTGRES_ONLY_ON_MYSQL, POSTGRES_ONLY_ON_SQLITE, SCHEMA_ON_SQLITE, UNSUPPORTED_DATA_SOURCE } from './scheduler.messages.js';
import { SCHEDULER_STORE, SCHEDULER_WORKER_OPTIONS } from './scheduler.tokens.js';

/** Picks the adapter for a DataSource by its driver type. */
export function createStore(options: SchedulerModuleOptions, dataSource: DataSource | undefined, dataSourceName?: string): JobStore {
  if (options.store) {
    checkExplicitStore(options, options.store);
    return options.store;
  }
  if (!dataSource) throw new InvalidArgumentError(NO_DATA_SOURCE(dataSourceName), 'dataSource');
  const type = String(dataSource.options.type);
  if (type === 'postgres') {
    return new PostgresJobStore({
      dataSource,
      schema: options.schema,
      tablePrefix: options.tablePrefix,
      limits: options.limits,
      historyPolicy: options.historyPolicy,
      finish: options.finish,
      asyncClaimCommit: options.asyncClaimCommit,
      poolMode: options.poolMode,
      preparedStatements: options.preparedStatements,
      listenUrl: options.listenUrl,
    });
  }
  if (type === 'mysql' || type === 'mariadb') {
    for (const option of POSTGRES_ONLY_OPTIONS) {
      if (options[option] !== undefined) throw new InvalidArgumentError(POSTGRES_ONLY_ON_MYSQL(option), option);
    }
    // MySQL calls a database a schema: `schema` names the database that holds the tables, and is
    // checked under the name the module's user gave it.
    if (options.schema !== undefined) assertSqlIdentifier(options.schema, 'schema');
    return new MysqlJobStore({ dataSource, database: options.schema, tablePrefix: options.tablePrefix, limits: options.limits, historyPolicy: options.historyPolicy, finish: options.finish });
  }
  if (type === 'better-sqlite3') {
    if (options.schema !== undefined) throw new InvalidArgumentError(SCHEMA_ON_SQLITE(), 'schema');
    for (const option of POSTGRES_ONLY_OPTIONS) {
      if (options[option] !== undefined) throw new InvalidArgumentError(POSTGRES_ONLY_ON_SQLITE(option), option);
    }
    return new SqliteJobStore({ dataSource, tablePrefix: options.tablePrefix, limits: options.limits, historyPolicy: options.historyPolicy, finish: options.finish });
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
    // The resolved worker options are injected, unused, so every option is checked before the
    // store migrates: a bad one writes nothing at all.
    inject: [optionsToken, SCHEDULER_WORKER_OPTIONS, { token: getDataSourceToken(dataSourceName), optional: true }],
    useFactory: async (options: SchedulerModuleOptions, _checked: unknown, registered?: DataSource) => {
      const store = createStore(options, options.dataSource ?? registered, dataSourceName);
      if (options.migrationsRun !== false) await store.migrate();
      return store;
    },
  };
}
