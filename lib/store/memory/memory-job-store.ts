import { checkOptions, LIFECYCLE_RULES, ManualClock, resolveLimits, type Clock, type FinishMode, type HistoryPolicy, type LifecycleRules, type SchedulerLimits } from '../../core/index.js';
import { CheckedStore } from '../checked/checked-store.js';
import { assertFinishMode, assertHistoryPolicy } from '../checked/effect-params.js';
import type { JobRow } from '../job-row.js';
import type { HistoryEntry } from '../job-store.types.js';
import type { ScheduleRow } from '../schedules/index.js';
import { MemoryDriver } from './memory-driver.js';
import { schedulesInOrder } from './memory-schedule-tx.js';
import type { MemoryStoreProbe, MemoryTables } from './memory-tables.js';

export type { MemoryStoreProbe } from './memory-tables.js';

/** Options of {@link MemoryJobStore}: its clock, its limits, its history policy, and the simulator's probe. */
export interface MemoryJobStoreOptions {
  /** The store's clock. Defaults to a {@link ManualClock}: time moves only when a test advances it. */
  readonly clock?: Clock;
  readonly limits?: Partial<SchedulerLimits>;
  /** What the transition history keeps. Default `transitions_and_errors`. */
  readonly historyPolicy?: HistoryPolicy;
  /**
   * What outcome writes do with a job that succeeds: `keep` it (default), or `lean`: delete it, with
   * its history, when nothing needs it (docs/stores.md#lean-finish).
   */
  readonly finish?: FinishMode;
  /** Told of every write as it happens: the simulator's oracles read the run's history from it. */
  readonly probe?: MemoryStoreProbe;
  /**
   * @internal The lifecycle rules to apply. Only the simulator's sabotage self-test sets this, to
   * prove its oracles catch a broken rule; everything else gets the real ones.
   */
  readonly lifecycle?: LifecycleRules;
  /**
   * @internal False writes every job as if no unique key were held. Only the simulator's sabotage
   * self-test sets it, to prove its unique-key oracle catches the breach.
   */
  readonly enforceUniqueKeys?: boolean;
}

/** The keys {@link MemoryJobStoreOptions} has: a misspelt one would otherwise leave its default in place. */
const MEMORY_STORE_KEYS = ['clock', 'limits', 'historyPolicy', 'finish', 'probe', 'lifecycle', 'enforceUniqueKeys'];

/**
 * A store that lives in one process's memory and runs on an injected clock. It applies the core
 * lifecycle function directly, so it is the reference the SQL adapters are held to. Use it for
 * unit tests and the simulator; it keeps nothing across restarts.
 */
export class MemoryJobStore extends CheckedStore {
  /** The clock every time comparison of this store reads. */
  readonly clock: Clock;
  /** What the store keeps, read by the helpers below (and, through a cast, the sabotage self-test). */
  private readonly tables: MemoryTables;

  constructor(options: MemoryJobStoreOptions = {}) {
    checkOptions(options, MEMORY_STORE_KEYS, { what: 'MemoryJobStore' });
    const driver = new MemoryDriver({
      clock: options.clock ?? new ManualClock(),
      limits: resolveLimits(options.limits),
      historyPolicy: assertHistoryPolicy(options.historyPolicy),
      finish: assertFinishMode(options.finish),
      probe: options.probe ?? {},
      rules: options.lifecycle ?? LIFECYCLE_RULES,
      enforceUniqueKeys: options.enforceUniqueKeys ?? true,
    });
    super(driver);
    this.clock = driver.clock;
    this.tables = driver.tables;
  }

  /** Every stored row, in enqueue order: for oracles and tests that compare whole rows. */
  rows(): JobRow[] {
    return [...this.tables.jobs.values()].sort((a, b) => a.seq - b.seq).map((row) => ({ ...row }));
  }

  /** Every history entry, for oracles and tests. */
  historyEntries(): HistoryEntry[] {
    return [...this.tables.history];
  }

  /** Every schedule row, for oracles and tests that compare whole rows. */
  scheduleRows(): ScheduleRow[] {
    return schedulesInOrder(this.tables.schedules).map((row) => ({ ...row }));
  }

  /** The paused queues, sorted. */
  pausedQueueNames(): string[] {
    return [...this.tables.pausedQueues].sort();
  }
}
