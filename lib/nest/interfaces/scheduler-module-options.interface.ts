import type { DataSource } from 'typeorm';
import type { FinishMode, HistoryPolicy, SchedulerLimits } from '../../core/index.js';
import type { JobStore, RateLimit } from '../../store/index.js';
import type { AttemptHook, WorkerOptions } from '../../worker/index.js';
import type { SchedulerTelemetryOptions } from '../../telemetry/index.js';
import type { ScheduledVerifyOptions } from '../../verify/index.js';
import type { DefinedJob } from '../job-definition.js';

/** Options of `SchedulerModule.forRoot` / `forRootAsync`. Every field has a default. */
export interface SchedulerModuleOptions extends WorkerOptions {
  /**
   * The store to use. By default the module builds one on the application's TypeORM DataSource:
   * PostgreSQL or SQLite (better-sqlite3), chosen by the DataSource's type. Pass a store to use
   * another, for example a `MemoryJobStore` in tests.
   */
  readonly store?: JobStore;
  /** A DataSource instance to build the store on, instead of the one registered by `@nestjs/typeorm`. */
  readonly dataSource?: DataSource;
  /**
   * Where the store's tables live: the PostgreSQL schema (default `durable_scheduler`), or on MySQL
   * and MariaDB the database (default the DataSource's own). SQLite has neither.
   */
  readonly schema?: string;
  /** Prefix of the store's table names. Default none on PostgreSQL, `durable_scheduler_` on SQLite. */
  readonly tablePrefix?: string;
  /** Size limits (payload, output, error text, names). */
  readonly limits?: Partial<SchedulerLimits>;
  /** Attempts for jobs whose `@Job` sets none. Default 10. */
  readonly maxAttempts?: number;
  /** Start the worker when the application boots. Default true; turn off for CLIs and tests. */
  readonly autoStart?: boolean;
  /**
   * Run a worker on this node. Default true. `false` makes a producer-only node: it enqueues and
   * operates jobs but never claims, heartbeats, mints schedules, sweeps or delivers to observers.
   */
  readonly worker?: boolean;
  /**
   * Job definitions (from `defineJob`) whose names this node knows without a handler class, so
   * `enqueue`, `enqueueMany` and `schedule` accept those names with the definitions' defaults.
   * Enqueueing by the definition itself needs no listing.
   */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  readonly jobs?: readonly DefinedJob<any>[];
  /** Create or upgrade the store's tables at boot. Default true. */
  readonly migrationsRun?: boolean;
  /**
   * What each job's history records: `transitions_and_errors` (default), `transitions` (no error
   * text), or `off` (no history, and `@OnJobTransition` observers are refused at boot).
   */
  readonly historyPolicy?: HistoryPolicy;
  /**
   * What the store's outcome writes do with a job that succeeds: `keep` it (default; retention
   * deletes it later), or `lean`: delete it, with its history, in the same write, when it has no
   * dependants, no output, no unique key, and no observer still to be fed its entries. See
   * docs/stores.md#lean-finish for what is lost (the job reads as unknown at once).
   */
  readonly finish?: FinishMode;
  /**
   * PostgreSQL only: commit claims without waiting for their WAL flush. Default false. See
   * `PostgresJobStoreOptions.asyncClaimCommit` for exactly what a server crash can then undo.
   */
  readonly asyncClaimCommit?: boolean;
  /**
   * PostgreSQL only: `transaction` when the DataSource's connections go through a pooler in
   * transaction mode (PgBouncer `pool_mode = transaction`). Default `session`. See
   * `PostgresJobStoreOptions.poolMode` and docs/operations.md#pgbouncer.
   */
  readonly poolMode?: 'session' | 'transaction';
  /** PostgreSQL only: prepare statements once per connection (default true in session mode, false in transaction mode). */
  readonly preparedStatements?: boolean;
  /** PostgreSQL only, with `poolMode: 'transaction'`: a connection string straight to the server, for LISTEN alone. */
  readonly listenUrl?: string;
  /**
   * Cluster-wide caps on running jobs per queue, set at boot (`{ mail: 5 }`). A queue not listed
   * keeps whatever limit it has; `null` removes one.
   */
  readonly queueLimits?: Readonly<Record<string, number | null>>;
  /**
   * Cluster-wide rate limits, set at boot: at most `max` starts in any window of `perMs`
   * milliseconds per queue or per concurrency key (`[{ queue: 'mail', max: 100, perMs: 60_000 }]`).
   * A limit already at that rate is left as it is; a limit dropped from the list stays in the store
   * until `SchedulerClient.setRateLimit(target, null)` removes it. See docs/rate-limits.md.
   */
  readonly rateLimits?: readonly RateLimit[];
  /**
   * Code wrapped around every handler invocation on this node, the first outermost: tracing,
   * metrics, context propagation. Each is `(context, next) => Promise<void>`; see
   * {@link AttemptHook}. To use a service in a hook, build the list in `forRootAsync`'s factory.
   */
  readonly attemptHooks?: readonly AttemptHook[];
  /**
   * OpenTelemetry spans and metrics, on by default when `@opentelemetry/api` is installed: they
   * cost nothing until the host registers an SDK. `false` turns both off; see
   * docs/observability.md.
   */
  readonly telemetry?: SchedulerTelemetryOptions | boolean;
  /**
   * Verify the store's history on a schedule, on one worker node of the cluster at a time (the
   * `verify` maintenance lease), and record each report in the audit log for the dashboard's
   * Guarantees page. Off by default; `true` verifies the last day, daily. See docs/verify.md.
   */
  readonly verify?: ScheduledVerifyOptions | boolean;
}

/** Structural switches of the module definition. */
export interface SchedulerModuleExtras {
  /** Register the module globally, so SchedulerClient can be injected anywhere. */
  readonly isGlobal?: boolean;
  /** Name of the `@nestjs/typeorm` DataSource to use, if not the default one. */
  readonly dataSourceName?: string;
}
