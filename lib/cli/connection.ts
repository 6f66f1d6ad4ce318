import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { assertSqlIdentifier, assertSqlPrefix, type SchedulerError } from '../core/index.js';
import type { JobStore } from '../store/index.js';
import { DEFAULT_MYSQL_PREFIX, LONGEST_MYSQL_TABLE, MAX_MYSQL_IDENTIFIER_LENGTH, MAX_MYSQL_PREFIX_LENGTH } from '../store/mysql/mysql-naming.js';
import { DEFAULT_POSTGRES_SCHEMA } from '../store/postgres/postgres-naming.js';
import { DEFAULT_SQLITE_PREFIX } from '../store/sqlite/sqlite-naming.js';
import { CliError } from './cli-error.js';

export interface ConnectionOptions {
  /** A `postgres://`, `mysql://` or `mariadb://` URL, or `sqlite:PATH`; defaults to DATABASE_URL. */
  readonly conn?: string;
  /** The jobs table: `[schema.]<prefix>jobs` on PostgreSQL, `[database.]<prefix>jobs` on MySQL, `<prefix>jobs` on SQLite. */
  readonly table?: string;
}

export interface Connection {
  readonly store: JobStore;
  /** Where the CLI is connected, without credentials. */
  readonly target: string;
  close(): Promise<void>;
}

/** Where a MySQL or MariaDB server is, from a mysql:// or mariadb:// URL, decoded. */
interface MysqlServerAddress {
  readonly host?: string;
  readonly port: number;
  readonly username?: string;
  readonly password?: string;
  /** The URL's database: the session's current one. */
  readonly database?: string;
}

type Target =
  | { readonly kind: 'postgres'; readonly url: string; readonly schema: string; readonly prefix: string; readonly shown: string }
  | {
      readonly kind: 'mysql';
      /** TypeORM's driver type, after the URL's scheme; both run the same mysql2 driver. */
      readonly type: 'mysql' | 'mariadb';
      readonly server: MysqlServerAddress;
      /** The database named in --table, or null for the URL's. */
      readonly database: string | null;
      readonly prefix: string;
      readonly shown: string;
    }
  | { readonly kind: 'sqlite'; readonly path: string; readonly prefix: string; readonly shown: string };

/** The table prefix from a jobs table name, refusing anything that is not `<identifier>jobs`. */
function prefixOf(table: string): string {
  assertSqlIdentifier(table, '--table');
  if (!table.endsWith('jobs')) throw new CliError(`--table must name the jobs table, ending in "jobs" (for example durable_scheduler.jobs), got "${table}".`);
  return assertSqlPrefix(table.slice(0, -'jobs'.length), '--table prefix');
}

/** Splits --table into its qualifier (schema or database) and jobs table; at most one dot. */
function splitTable(table: string, qualifier: 'schema' | 'database'): { readonly qualifier: string | null; readonly prefix: string } {
  const parts = table.split('.');
  if (parts.length > 2) throw new CliError(`--table must be "table" or "${qualifier}.table", got ${JSON.stringify(table.slice(0, 80))}.`);
  return { qualifier: parts.length === 2 ? assertSqlIdentifier(parts[0], `--table ${qualifier}`) : null, prefix: prefixOf(parts[parts.length - 1]!) };
}

/**
 * The PostgreSQL driver percent-decodes the user name, password and database name of its URL, and
 * the CLI those of a MySQL one; either throws a bare "URI malformed" at a bad escape. Check them
 * first, naming the part but never showing it, since it may be the password.
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

/**
 * A mysql:// or mariadb:// URL and --table. The URL is decoded here and handed to the driver part
 * by part: TypeORM's own URL parsing leaves the database name percent-encoded and drops a query
 * without a word, so the CLI refuses a query rather than ignore what it asks for.
 */
function parseMysqlTarget(conn: string, tableOption: string | undefined): Target {
  const type = conn.startsWith('mariadb:') ? 'mariadb' : 'mysql';
  let url: URL;
  try {
    url = new URL(conn);
  } catch {
    throw new CliError(`The --conn value is not a valid ${type}:// URL.`);
  }
  assertPercentEncoding(url);
  if (url.search !== '' || url.hash !== '') throw new CliError(`The --conn value has a query or fragment, which the CLI does not read on MySQL; pass ${type}://user:password@host:port/database alone.`);
  const path = decodeURIComponent(url.pathname.slice(1));
  if (path.includes('/')) throw new CliError(`The --conn value's path must be one database name, as in ${type}://user@host/database.`);
  const table = tableOption === undefined ? { qualifier: null, prefix: DEFAULT_MYSQL_PREFIX } : splitTable(tableOption, 'database');
  if (table.prefix.length > MAX_MYSQL_PREFIX_LENGTH) {
    throw new CliError(
      `--table prefix must be at most ${MAX_MYSQL_PREFIX_LENGTH} characters on MySQL, since the store adds table names of up to ${LONGEST_MYSQL_TABLE.length} characters and MySQL refuses names past ${MAX_MYSQL_IDENTIFIER_LENGTH}, got ${table.prefix.length} characters.`,
    );
  }
  if (path === '' && table.qualifier === null) throw new CliError(`The --conn value names no database; add one (${type}://user@host/database) or put it in --table (database.${table.prefix}jobs).`);
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const server: MysqlServerAddress = {
    ...(host ? { host } : {}),
    port: url.port ? Number(url.port) : 3306,
    ...(url.username ? { username: decodeURIComponent(url.username) } : {}),
    ...(url.password ? { password: decodeURIComponent(url.password) } : {}),
    ...(path ? { database: path } : {}),
  };
  return { kind: 'mysql', type, server, database: table.qualifier, prefix: table.prefix, shown: `${type}://${url.host}${url.pathname}` };
}

/** Reads --conn and --table and validates both before any connection is opened or SQL sent. */
export function parseTarget(options: ConnectionOptions, env: NodeJS.ProcessEnv = process.env): Target {
  const conn = options.conn ?? env.DATABASE_URL;
  if (!conn) throw new CliError('No database given; pass --conn postgres://user@host/db, --conn mysql://user@host/db or --conn sqlite:./file.db, or set DATABASE_URL.');
  if (/^postgres(ql)?:\/\//.test(conn)) {
    let url: URL;
    try {
      url = new URL(conn);
    } catch {
      throw new CliError('The --conn value is not a valid postgres:// URL.');
    }
    assertPercentEncoding(url);
    const table = options.table === undefined ? { qualifier: null, prefix: '' } : splitTable(options.table, 'schema');
    return { kind: 'postgres', url: conn, schema: table.qualifier ?? DEFAULT_POSTGRES_SCHEMA, prefix: table.prefix, shown: `postgres://${url.host}${url.pathname}` };
  }
  if (/^(mysql|mariadb):\/\//.test(conn)) return parseMysqlTarget(conn, options.table);
  if (conn.startsWith('sqlite:')) {
    const path = resolve(conn.slice('sqlite:'.length));
    if (options.table !== undefined && options.table.includes('.')) throw new CliError('--table on SQLite is a plain table name, without a schema.');
    const prefix = options.table === undefined ? DEFAULT_SQLITE_PREFIX : prefixOf(options.table);
    return { kind: 'sqlite', path, prefix, shown: `sqlite:${path}` };
  }
  throw new CliError('The --conn value must start with postgres://, mysql://, mariadb:// or sqlite: (for example sqlite:./jobs.db).');
}

/** What goes before the jobs table's name when the CLI names it: its schema or database. */
function tableQualifier(target: Target): string {
  if (target.kind === 'postgres') return `${target.schema}.`;
  if (target.kind === 'mysql') return `${target.database ?? target.server.database}.`;
  return '';
}

/**
 * Opens the store the CLI acts on. Unless `create` is set (migrate), a missing database file or
 * missing scheduler tables is an error, so no command writes into the wrong place.
 */
export async function connect(options: ConnectionOptions, { create = false } = {}, env: NodeJS.ProcessEnv = process.env): Promise<Connection> {
  const target = parseTarget(options, env);
  if (target.kind === 'sqlite' && !create && !existsSync(target.path)) throw new CliError(`No SQLite database exists at ${target.path}.`);
  // TypeORM and the stores load here, not at start-up: a command refused for its arguments, or
  // --help, answers in the time node takes to start rather than the time TypeORM takes to load.
  const [{ DataSource }, { MysqlJobStore, PostgresJobStore, SqliteJobStore }] = await Promise.all([import('typeorm'), import('../store/index.js')]);
  const dataSource = new DataSource(
    target.kind === 'postgres'
      ? { type: 'postgres', url: target.url, extra: { max: 2, connectionTimeoutMillis: 10_000 } }
      : target.kind === 'mysql'
        ? { type: target.type, ...target.server, poolSize: 2, connectTimeout: 10_000 }
        : { type: 'better-sqlite3', database: target.path },
  );
  try {
    await dataSource.initialize();
  } catch (error) {
    const reason = (error as { code?: string; message?: string }).code ?? (error as Error).message ?? String(error);
    throw new CliError(`Could not connect to ${target.shown} (${String(reason).split('\n')[0]}).`);
  }
  // The URL's database exists, or the connection would have failed. The store does not create the
  // one named in --table (migrate on PostgreSQL creates its schema), so a missing one is named here.
  if (target.kind === 'mysql' && target.database !== null) {
    const found = (await dataSource.query('SELECT 1 FROM information_schema.schemata WHERE schema_name = ?', [target.database])) as unknown[];
    if (found.length === 0) {
      await dataSource.destroy().catch(() => undefined);
      throw new CliError(`No database named ${target.database} exists at ${target.shown}; check --table, or create it first (CREATE DATABASE ${target.database}).`);
    }
  }
  // The CLI and the standalone dashboard never LISTEN and keep nothing between transactions, so they
  // run as behind a pooler in transaction mode wherever --conn points: through PgBouncer as well as
  // straight to the server. Unprepared statements cost a command nothing it would notice.
  // On MySQL the store opens a pool of its own beside the DataSource's; a command makes one store
  // call at a time, so two sessions in each keep the CLI light on the server's max_connections.
  const store =
    target.kind === 'postgres'
      ? new PostgresJobStore({ dataSource, schema: target.schema, tablePrefix: target.prefix, poolMode: 'transaction' })
      : target.kind === 'mysql'
        ? new MysqlJobStore({ dataSource, tablePrefix: target.prefix, poolSize: 2, ...(target.database === null ? {} : { database: target.database }) })
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
      const table = `${tableQualifier(target)}${target.prefix}jobs`;
      throw new CliError(`No scheduler tables named ${table} exist at ${target.shown}; check --table, or run "durable-scheduler migrate" first.`);
    }
  }
  return { store, target: target.shown, close };
}
