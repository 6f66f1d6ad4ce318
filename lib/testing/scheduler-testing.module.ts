import { Module, type DynamicModule } from '@nestjs/common';
import { getDataSourceToken } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { checkOptions, InvalidArgumentError, ManualClock, showValue } from '../core/index.js';
import { MemoryJobStore, SqliteJobStore, type JobStore } from '../store/index.js';
import { SCHEDULER_OPTION_KEYS, SchedulerModule, type SchedulerModuleOptions } from '../nest/index.js';
import { SCHEDULER_NODE_TIMING, type SchedulerNodeTiming } from '../nest/scheduler-node-timing.js';
import type { Timers } from '../worker/index.js';
import { ManualTimers } from './manual-timers.js';
import type { SchedulerTestingOptions } from './scheduler-testing.options.js';
import { SCHEDULER_TESTING, SchedulerTester, type SchedulerTestingState } from './scheduler-tester.js';

/**
 * The scheduler for an application's tests: `SchedulerModule` on a store of the kit's choosing and
 * a manual clock, its worker on timers that never fire by themselves, and a {@link SchedulerTester}
 * to run jobs (`drain`), move time (`advance`) and check what was enqueued. Import it instead of
 * `SchedulerModule` in `Test.createTestingModule`; the `@Job` handlers, observers and
 * request-scoped providers are the application's own.
 */
@Module({})
export class SchedulerTestingModule {
  static forRoot(options: SchedulerTestingOptions = {}): DynamicModule {
    const { store = 'memory', clock = new ManualClock(), inline = false, isGlobal = true, dataSourceName, ...scheduler } = checkKitOptions(options);
    const timers = new ManualTimers(clock);
    const timing: SchedulerNodeTiming = { clock, timers, waiterTimers: waiterTimers(timers) };
    const state: SchedulerTestingState = { clock, timers, inline };
    const module = SchedulerModule.forRootAsync({
      isGlobal,
      dataSourceName,
      inject: [{ token: getDataSourceToken(dataSourceName), optional: true }],
      useFactory: (dataSource?: DataSource): SchedulerModuleOptions => {
        const { tablePrefix, ...rest } = scheduler;
        return { ...rest, store: testStore(store, clock, dataSource, { ...scheduler, tablePrefix }) };
      },
    });
    return {
      module: SchedulerTestingModule,
      global: isGlobal,
      // The node's clock and timers are read by the orchestrator, inside the scheduler's module.
      imports: [{ ...module, providers: [...(module.providers ?? []), { provide: SCHEDULER_NODE_TIMING, useValue: timing }] }],
      providers: [{ provide: SCHEDULER_TESTING, useValue: state }, SchedulerTester],
      exports: [SchedulerTester],
    };
  }
}

/**
 * The timers of `waitFor` under the kit: a timeout, and the polls after a wait's first read, wait
 * for the test to move the kit's clock, like everything else on it; the first read does not, so a
 * wait on an unknown id or a finished job settles at once instead of at the next drain.
 */
function waiterTimers(timers: ManualTimers): Timers {
  return {
    setTimeout: (callback, ms) => timers.setTimeout(callback, ms),
    clearTimeout: (handle) => timers.clearTimeout(handle),
    defer: (callback) => void setImmediate(callback),
  };
}

/** The kit's own options, checked before anything is built; the scheduler's are checked by SchedulerModule. */
function checkKitOptions(options: SchedulerTestingOptions): SchedulerTestingOptions {
  if (options === null || typeof options !== 'object') {
    throw new InvalidArgumentError(`SchedulerTestingModule options must be an object, got ${showValue(options)}.`, 'options');
  }
  for (const key of ['dataSource', 'schema', 'asyncClaimCommit', 'autoStart', 'worker', 'migrationsRun']) {
    if ((options as Record<string, unknown>)[key] === undefined) continue;
    throw new InvalidArgumentError(`SchedulerTestingModule builds its own store and worker, so it does not take the ${key} option; see docs/testing.md.`, key);
  }
  // The scheduler's options pass on to SchedulerModule; a key neither knows is refused here, in the kit's name.
  checkOptions(options, [...SCHEDULER_OPTION_KEYS, 'clock', 'inline'], { what: 'SchedulerTestingModule', docs: 'docs/testing.md' });
  if (options.store !== undefined && options.store !== 'memory' && options.store !== 'sqlite') {
    throw new InvalidArgumentError(`store must be "memory" or "sqlite" (the kit builds the store, on its clock), got ${showValue(options.store)}.`, 'store');
  }
  if (options.clock !== undefined && !(options.clock instanceof ManualClock)) {
    throw new InvalidArgumentError('clock must be a ManualClock from nestjs-durable-scheduler/testing.', 'clock');
  }
  for (const flag of ['inline', 'isGlobal'] as const) {
    if (options[flag] !== undefined && typeof options[flag] !== 'boolean') {
      throw new InvalidArgumentError(`${flag} must be true or false, got ${showValue(options[flag])}.`, flag);
    }
  }
  return options;
}

/** The store the kit runs on, on the kit's clock. */
function testStore(
  kind: 'memory' | 'sqlite',
  clock: ManualClock,
  dataSource: DataSource | undefined,
  options: Pick<SchedulerModuleOptions, 'limits' | 'historyPolicy' | 'finish' | 'tablePrefix'>,
): JobStore {
  if (kind === 'memory') {
    if (options.tablePrefix !== undefined) throw new InvalidArgumentError('tablePrefix applies only to the sqlite store; the memory store has no tables.', 'tablePrefix');
    return new MemoryJobStore({ clock, limits: options.limits, historyPolicy: options.historyPolicy, finish: options.finish });
  }
  if (dataSource === undefined) {
    throw new InvalidArgumentError('The sqlite store runs on the application\'s TypeORM DataSource; register one with TypeOrmModule.forRoot({ type: "better-sqlite3", ... }).', 'store');
  }
  if (dataSource.options.type !== 'better-sqlite3') {
    throw new InvalidArgumentError(`The sqlite store needs a better-sqlite3 DataSource, got one of type ${showValue(String(dataSource.options.type))}.`, 'store');
  }
  return new SqliteJobStore({ dataSource, clock, tablePrefix: options.tablePrefix, limits: options.limits, historyPolicy: options.historyPolicy, finish: options.finish });
}
