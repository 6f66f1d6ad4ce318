import { createHash } from 'node:crypto';
import { assertSqlIdentifier, assertSqlPrefix, InvalidIdentifierError, MAX_IDENTIFIER_LENGTH, quoteIdentifier } from '../../core/index.js';

export const DEFAULT_POSTGRES_SCHEMA = 'durable_scheduler';

/**
 * The longest name the store derives from the table prefix: of every table, index, constraint,
 * trigger and function its migrations and installed SQL create (test/store/postgres-naming.spec.ts
 * renders them all and checks that none is longer). PostgreSQL truncates a name past 63 bytes, so
 * a longer prefix would make two derived names collide, or differ from the ones the code uses.
 */
export const LONGEST_DERIVED_SUFFIX = 'concurrency_limits_surplus_check';

/** The longest table prefix the PostgreSQL store accepts. */
export const MAX_POSTGRES_PREFIX_LENGTH = MAX_IDENTIFIER_LENGTH - LONGEST_DERIVED_SUFFIX.length;

/** Table and channel names for one installation, validated once and quoted for SQL. */
export interface PostgresNaming {
  readonly schema: string;
  readonly prefix: string;
  /** `"schema"."prefixjobs"` */
  readonly jobs: string;
  readonly queues: string;
  readonly migrations: string;
  /** The version of the functions and triggers installed on top of the migrations (sql-install.ts). */
  readonly installed: string;
  readonly schedules: string;
  readonly audit: string;
  readonly dependencies: string;
  readonly limits: string;
  readonly slots: string;
  readonly history: string;
  readonly cursors: string;
  /** Stored jobs per (queue, state), as of the last fold (migration 0012). */
  readonly counts: string;
  /** What each statement changed in the counts since the last fold. */
  readonly countDeltas: string;
  /** Maintenance tasks: the sweep's lease and the history trim's place in the log. */
  readonly maintenance: string;
  /** The node registry: a row per worker node that runs or ran lately (migration 0013). */
  readonly nodes: string;
  /** Rate limits and the starts each counts (migration 0017). */
  readonly rateLimits: string;
  readonly rateStarts: string;
  /** Each sequence key's tail (migration 0022). */
  readonly sequences: string;
  /** `"schema"."prefix" + name` for any of the store's tables. */
  table(name: string): string;
  /** The LISTEN/NOTIFY channel for wake-up hints (raw, not quoted). */
  readonly channel: string;
  /** Quotes `prefix + name` for an index or constraint inside the schema. */
  local(name: string): string;
  /** The text the migration lock hashes; unique per installation. */
  readonly lockKey: string;
}

/**
 * Validates the schema and table prefix (they come from configuration or the CLI) and derives every
 * quoted name from them. Nothing else in the adapter builds a name.
 */
export function postgresNaming(schema = DEFAULT_POSTGRES_SCHEMA, prefix = ''): PostgresNaming {
  assertSqlIdentifier(schema, 'schema');
  assertSqlPrefix(prefix, 'tablePrefix');
  if (prefix.length > MAX_POSTGRES_PREFIX_LENGTH) {
    throw new InvalidIdentifierError(
      `tablePrefix must be at most ${MAX_POSTGRES_PREFIX_LENGTH} characters, because the store adds suffixes of up to ${LONGEST_DERIVED_SUFFIX.length} ("${LONGEST_DERIVED_SUFFIX}") and PostgreSQL truncates names past ${MAX_IDENTIFIER_LENGTH} bytes, got ${prefix.length} characters ("${prefix}").`,
      'tablePrefix',
    );
  }
  const table = (name: string) => `${quoteIdentifier(schema)}.${quoteIdentifier(prefix + name)}`;
  const plainChannel = `${schema}.${prefix}jobs`;
  return {
    schema,
    prefix,
    jobs: table('jobs'),
    queues: table('queues'),
    migrations: table('migrations'),
    installed: table('installed'),
    schedules: table('schedules'),
    audit: table('audit_log'),
    dependencies: table('dependencies'),
    limits: table('concurrency_limits'),
    slots: table('concurrency_slots'),
    history: table('job_history'),
    cursors: table('observer_cursors'),
    counts: table('job_counts'),
    countDeltas: table('job_count_deltas'),
    maintenance: table('maintenance'),
    nodes: table('nodes'),
    rateLimits: table('rate_limits'),
    rateStarts: table('rate_starts'),
    sequences: table('sequences'),
    table,
    channel:
      plainChannel.length <= MAX_IDENTIFIER_LENGTH
        ? plainChannel
        : `durable_scheduler_${createHash('sha1').update(plainChannel).digest('hex').slice(0, 32)}`,
    local: (name: string) => quoteIdentifier(prefix + name),
    lockKey: `nestjs-durable-scheduler:${schema}.${prefix}`,
  };
}
