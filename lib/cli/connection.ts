import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { assertSqlIdentifier, assertSqlPrefix, type SchedulerError } from '../core/index.js';
import type { JobStore } from '../store/index.js';
import { DEFAULT_POSTGRES_SCHEMA } from '../store/postgres/postgres-naming.js';
import { DEFAULT_SQLITE_PREFIX } from '../store/sqlite/sqlite-naming.js';
import { CliError } from './cli-error.js';

export interface ConnectionOptions {
  /** A `postgres://` URL or `sqlite:PATH`; defaults to DATABASE_URL. */
  readonly conn?: string;
  /** The jobs table: `[schema.]<prefix>jobs` on PostgreSQL, `<prefix>jobs` on SQLite. */
  readonly table?: string;
}

export interface Connection {
  readonly store: JobStore;
  /** Where the CLI is connected, without credentials. */
  readonly target: string;
  close(): Promise<void>;
}

type Target =
  | { readonly kind: 'postgres'; readonly url: string; readonly schema: string; readonly prefix: string; readonly shown: string }
  | { readonly kind: 'sqlite'; readonly path: string; readonly prefix: string; readonly shown: string };

/** The table prefix from a jobs table name, refusing anything that is not `<identifier>jobs`. */
function prefixOf(table: string): string {
  assertSqlIdentifier(table, '--table');
  if (!table.endsWith('jobs')) throw new CliError(`--table must name the jobs table, ending in "jobs" (for example durable_scheduler.jobs), got "${table}".`);
  return assertSqlPrefix(table.slice(0, -'jobs'.length), '--table prefix');
}

/**
 * The driver percent-decodes the user name, password and database name of a postgres:// URL and
 * throws a bare "URI malformed" at a bad escape. Check them first, naming the part but never
 * showing it, since it may be the password.
 */
function assertPercentEncoding(url: URL): void {
  const parts = [
    ['user name', url.username],
    ['password', url.password],
    ['database name', url.pathname.slice(1)],
  ] as const;
  for (const [part, value] of parts) {
    try {
      decodeURIComponent(value);
    } catch {
      throw new CliError(`The --conn value has a malformed percent-encoding in its ${part}; write a literal "%" as %25.`);
    }
  }
}

/** Reads --conn and --table and validates both before any connection is opened or SQL sent. */
export function parseTarget(options: ConnectionOptions, env: NodeJS.ProcessEnv = process.env): Target {
  const conn = options.conn ?? env.DATABASE_URL;
  if (!conn) throw new CliError('No database given; pass --conn postgres://user@host/db or --conn sqlite:./file.db, or set DATABASE_URL.');
  if (/^postgres(ql)?:\/\//.test(conn)) {
    let url: URL;
    try {
      url = new URL(conn);
    } catch {
      throw new CliError('The --conn value is not a valid postgres:// URL.');
    }
    assertPercentEncoding(url);
    let schema = DEFAULT_POSTGRES_SCHEMA;
    let prefix = '';
    if (options.table !== undefined) {
      const parts = options.table.split('.');
      if (parts.length > 2) throw new CliError(`--table must be "table" or "schema.table", got ${JSON.stringify(options.table.slice(0, 80))}.`);
      if (parts.length === 2) schema = assertSqlIdentifier(parts[0], '--table schema');
      prefix = prefixOf(parts[parts.length - 1]!);
    }
    return { kind: 'postgres', url: conn, schema, prefix, shown: `postgres://${url.host}${url.pathname}` };
  }
  if (conn.startsWith('sqlite:')) {
    const path = resolve(conn.slice('sqlite:'.length));
    if (options.table !== undefined && options.table.includes('.')) throw new CliError('--table on SQLite is a plain table name, without a schema.');
    const prefix = options.table === undefined ? DEFAULT_SQLITE_PREFIX : prefixOf(options.table);
    return { kind: 'sqlite', path, prefix, shown: `sqlite:${path}` };
  }
  throw new CliError('The --conn value must start with postgres:// or sqlite: (for example sqlite:./jobs.db).');
}

/**
 * Opens the store the CLI acts on. Unless `create` is set (migrate), a missing database file or
 * missing scheduler tables is an error, so no command writes into the wrong place.
 */
export async function connect(options: ConnectionOptions, { create = false } = {}): Promise<Connection> {
  const target = parseTarget(options);
  if (target.kind === 'sqlite' && !create && !existsSync(target.path)) throw new CliError(`No SQLite database exists at ${target.path}.`);
  // TypeORM and the stores load here, not at start-up: a command refused for its arguments, or
  // --help, answers in the time node takes to start rather than the time TypeORM takes to load.
  const [{ DataSource }, { PostgresJobStore, SqliteJobStore }] = await Promise.all([import('typeorm'), import('../store/index.js')]);
  const dataSource = new DataSource(
    target.kind === 'postgres'
      ? { type: 'postgres', url: target.url, extra: { max: 2, connectionTimeoutMillis: 10_000 } }
      : { type: 'better-sqlite3', database: target.path },
  );
  try {
    await dataSource.initialize();
  } catch (error) {
    const reason = (error as { code?: string; message?: string }).code ?? (error as Error).message ?? String(error);
    throw new CliError(`Could not connect to ${target.shown} (${String(reason).split('\n')[0]}).`);
  }
  // The CLI and the standalone dashboard never LISTEN and keep nothing between transactions, so they
  // run as behind a pooler in transaction mode wherever --conn points: through PgBouncer as well as
  // straight to the server. Unprepared statements cost a command nothing it would notice.
  const store =
    target.kind === 'postgres'
      ? new PostgresJobStore({ dataSource, schema: target.schema, tablePrefix: target.prefix, poolMode: 'transaction' })
      : new SqliteJobStore({ dataSource, tablePrefix: target.prefix });
  const close = async () => {
    await store.close().catch(() => undefined);
    await dataSource.destroy().catch(() => undefined);
  };
  if (!create) {
    const version = await store.schemaVersion().catch((error: SchedulerError) => {
      void close();
      throw new CliError(`Could not read the scheduler tables at ${target.shown} (${error.message}).`);
    });
    if (version === null) {
      await close();
      const table = target.kind === 'postgres' ? `${target.schema}.${target.prefix}jobs` : `${target.prefix}jobs`;
      throw new CliError(`No scheduler tables named ${table} exist at ${target.shown}; check --table, or run "durable-scheduler migrate" first.`);
    }
  }
  return { store, target: target.shown, close };
}
