import { assertSqlIdentifier, assertSqlPrefix, InvalidIdentifierError } from '../../core/index.js';
import type { MigrationNames } from '../sql-migrations.js';

export const DEFAULT_MYSQL_PREFIX = 'durable_scheduler_';

/** MySQL and MariaDB refuse names past 64 characters. */
export const MAX_MYSQL_IDENTIFIER_LENGTH = 64;

/**
 * The longest table name the store derives from the prefix. Index and constraint names are scoped
 * to their table in MySQL, so only table names carry the prefix.
 */
export const LONGEST_MYSQL_TABLE = 'concurrency_limits';

/** The longest table prefix the MySQL store accepts. */
export const MAX_MYSQL_PREFIX_LENGTH = MAX_MYSQL_IDENTIFIER_LENGTH - LONGEST_MYSQL_TABLE.length;

/** Quoted table names for one installation, validated once; nothing else in the adapter builds a name. */
export interface MysqlNaming extends MigrationNames {
  /** The database the tables live in, or null for the connection's current one. */
  readonly database: string | null;
  readonly prefix: string;
  readonly jobs: string;
  readonly queues: string;
  readonly migrations: string;
  readonly schedules: string;
  readonly audit: string;
  readonly dependencies: string;
  readonly limits: string;
  readonly history: string;
  readonly cursors: string;
  /** Stored jobs per (queue, state), as of the last fold. */
  readonly counts: string;
  /** What each write changed in the counts since the last fold. */
  readonly countDeltas: string;
  readonly maintenance: string;
  readonly nodes: string;
  readonly rateLimits: string;
  readonly rateStarts: string;
  /** Each sequence key's tail (migration 0022). */
  readonly sequences: string;
  /** Transaction-scoped named locks (mysql-locks.ts). */
  readonly locks: string;
}

/** Backticks around a name that passed {@link assertSqlIdentifier}: it holds no backtick to escape. */
export function quoteMysqlIdentifier(identifier: string): string {
  return `\`${identifier}\``;
}

/**
 * Validates the database and table prefix (they come from configuration or the CLI) and derives
 * every quoted name from them. Names are lower case only (assertSqlIdentifier): a server with
 * `lower_case_table_names = 0` (Linux) tells case apart and one with 1 or 2 (Windows, macOS) does
 * not, so lower-case names are the only ones that mean the same table on both.
 */
export function mysqlNaming(prefix = DEFAULT_MYSQL_PREFIX, database: string | null = null): MysqlNaming {
  assertSqlPrefix(prefix, 'tablePrefix');
  if (database !== null) assertSqlIdentifier(database, 'database');
  if (prefix.length > MAX_MYSQL_PREFIX_LENGTH) {
    throw new InvalidIdentifierError(
      `tablePrefix must be at most ${MAX_MYSQL_PREFIX_LENGTH} characters, because the store adds table names of up to ${LONGEST_MYSQL_TABLE.length} ("${LONGEST_MYSQL_TABLE}") and MySQL refuses names past ${MAX_MYSQL_IDENTIFIER_LENGTH}, got ${prefix.length} characters ("${prefix}").`,
      'tablePrefix',
    );
  }
  const qualifier = database === null ? '' : `${quoteMysqlIdentifier(database)}.`;
  const table = (name: string) => `${qualifier}${quoteMysqlIdentifier(prefix + name)}`;
  return {
    database,
    prefix,
    jobs: table('jobs'),
    queues: table('queues'),
    migrations: table('migrations'),
    schedules: table('schedules'),
    audit: table('audit_log'),
    dependencies: table('dependencies'),
    limits: table('concurrency_limits'),
    history: table('job_history'),
    cursors: table('observer_cursors'),
    counts: table('job_counts'),
    countDeltas: table('job_count_deltas'),
    maintenance: table('maintenance'),
    nodes: table('nodes'),
    rateLimits: table('rate_limits'),
    rateStarts: table('rate_starts'),
    sequences: table('sequences'),
    locks: table('locks'),
    table,
    local: quoteMysqlIdentifier,
  };
}
