import { assertSqlPrefix, MAX_IDENTIFIER_LENGTH, assertSqlIdentifier, quoteIdentifier } from '../../core/index.js';
import type { MigrationNames } from '../sql-migrations.js';

export const DEFAULT_SQLITE_PREFIX = 'durable_scheduler_';

/** Quoted table names for one installation in a SQLite file; tables carry the prefix. */
export interface SqliteNaming extends MigrationNames {
  readonly prefix: string;
  readonly jobs: string;
  readonly queues: string;
  readonly migrations: string;
  /** The version of the triggers installed on top of the migrations (sql-install.ts). */
  readonly installed: string;
  readonly schedules: string;
  readonly audit: string;
  readonly dependencies: string;
  readonly limits: string;
  readonly history: string;
  readonly cursors: string;
  /** Maintenance tasks: the sweep's lease and the history trim's place in the log. */
  readonly maintenance: string;
  /** The settle trigger's work table (see sqlite-effects.ts), empty between statements. */
  readonly cascade: string;
  /** Stored jobs per (queue, state), kept by the counting triggers (migration 0012). */
  readonly counts: string;
  /** The node registry: a row per worker node that runs or ran lately (migration 0013). */
  readonly nodes: string;
  /** Rate limits and the starts each counts (migration 0017). */
  readonly rateLimits: string;
  readonly rateStarts: string;
  /** Each sequence key's tail (migration 0022). */
  readonly sequences: string;
}

export function sqliteNaming(prefix = DEFAULT_SQLITE_PREFIX): SqliteNaming {
  assertSqlPrefix(prefix, 'tablePrefix');
  // The longest name the migrations derive from the prefix (an index on the edges table).
  const longest = `${prefix}dependencies_parent_idx`;
  if (longest.length > MAX_IDENTIFIER_LENGTH) assertSqlIdentifier(longest, 'tablePrefix (with the longest suffix the store adds)');
  const local = (name: string) => quoteIdentifier(prefix + name);
  return {
    prefix,
    jobs: local('jobs'),
    queues: local('queues'),
    migrations: local('migrations'),
    installed: local('installed'),
    schedules: local('schedules'),
    audit: local('audit_log'),
    dependencies: local('dependencies'),
    limits: local('concurrency_limits'),
    history: local('job_history'),
    cursors: local('observer_cursors'),
    maintenance: local('maintenance'),
    cascade: local('dependency_cascade'),
    counts: local('job_counts'),
    nodes: local('nodes'),
    rateLimits: local('rate_limits'),
    rateStarts: local('rate_starts'),
    sequences: local('sequences'),
    table: local,
    local,
  };
}
