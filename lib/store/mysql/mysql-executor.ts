import { StoreBusyError, StoreUnavailableError } from '../../core/index.js';
import type { MysqlConnection, MysqlField, MysqlResultHeader, MysqlTypeCast } from './mysql-driver-types.js';

/** One statement and its parameters. */
export interface MysqlStatement {
  readonly sql: string;
  readonly values?: readonly unknown[];
}

/** Receives every statement the adapter sends, e.g. to count round trips in tests. */
export type MysqlStatementListener = (sql: string) => void;

/** Runs SQL for the adapter: on a store session, or inside a caller's open TypeORM transaction. */
export interface MysqlExecutor {
  /** Rows of one SELECT. */
  query<R>(sql: string, values?: readonly unknown[]): Promise<R[]>;
  /** One write: what it changed. */
  run(sql: string, values?: readonly unknown[]): Promise<MysqlResultHeader>;
  /**
   * Statements in order, with each one's result: in one round trip on a store session, one by one
   * on a caller's (whose session may not allow several statements in one query).
   */
  script(statements: readonly MysqlStatement[]): Promise<unknown[]>;
}

/**
 * Reads every column the same way whatever the session's options: instants and DECIMALs as text
 * (mysql-instant.ts says why), BIGINTs as numbers while they are exact, JSON as its text. A
 * caller's session (an enqueue in the host's transaction) has the host's `dateStrings`,
 * `timezone` and `bigNumberStrings`, so the cast goes with every query rather than with the pool.
 * The VARBINARY keys (the schema says why they are bytes) come back as the UTF-8 text they hold.
 */
export const MYSQL_TYPE_CAST: MysqlTypeCast = (field: MysqlField, next) => {
  switch (field.type) {
    case 'VAR_STRING':
    case 'STRING':
    case 'BLOB': {
      // A binary string is read as a Buffer (the field does not say its character set).
      const value = next();
      return Buffer.isBuffer(value) ? value.toString('utf8') : value;
    }
    case 'DATETIME':
    case 'TIMESTAMP':
    case 'DATE':
    case 'NEWDECIMAL':
      return field.string();
    case 'JSON':
      return field.string('utf8');
    case 'LONGLONG': {
      const text = field.string();
      if (text === null) return null;
      const value = Number(text);
      return Number.isSafeInteger(value) ? value : text;
    }
    default:
      return next();
  }
};

/** MySQL's error numbers for a transaction that lost a lock: rolled back (deadlock) or timed out waiting. */
export const ER_LOCK_DEADLOCK = 1213;
export const ER_LOCK_WAIT_TIMEOUT = 1205;
/** A table, or a database, the statement names does not exist. */
const ER_NO_SUCH_TABLE = 1146;
const ER_BAD_DB_ERROR = 1049;

type DriverError = Error & { errno?: number; code?: string; fatal?: boolean; sqlMessage?: string };

/** The error a failed statement becomes: lost connections and lock failures typed, the rest as they are. */
export function mysqlFailure(error: unknown): unknown {
  const e = error as DriverError;
  if (e instanceof StoreBusyError || e instanceof StoreUnavailableError) return e;
  if (e?.errno === ER_LOCK_DEADLOCK || e?.errno === ER_LOCK_WAIT_TIMEOUT) {
    return new StoreBusyError(
      e.errno === ER_LOCK_DEADLOCK
        ? 'The MySQL server rolled the transaction back to break a deadlock with another transaction, so nothing was written; try again.'
        : "A row the store needed stayed locked by another transaction past the server's innodb_lock_wait_timeout, so nothing was written; try again.",
      { cause: error },
    );
  }
  if (e?.errno === ER_NO_SUCH_TABLE) {
    return new StoreUnavailableError(
      "The scheduler's tables do not exist where the store looks for them; run migrate() (the Nest module does at boot), or check the store's database and tablePrefix.",
      { cause: error },
    );
  }
  if (e?.errno === ER_BAD_DB_ERROR) {
    return new StoreUnavailableError("The store's database does not exist on the server; create it, or name another with the database option.", { cause: error });
  }
  if (e?.fatal || (typeof e?.code === 'string' && /^(ECONN|ETIMEDOUT|EPIPE|PROTOCOL_|ER_CON_COUNT|EHOSTUNREACH|ENOTFOUND|POOL_CLOSED)/.test(e.code))) {
    return new StoreUnavailableError(`The MySQL server could not be reached or closed the store's connection (${e.code ?? 'fatal error'}); nothing more ran on it.`, { cause: error });
  }
  return error;
}

/** True for a failure that a store-owned transaction may run again from the start. */
export function isLockFailure(error: unknown): boolean {
  const cause = error instanceof StoreBusyError ? (error.cause as DriverError | undefined) : (error as DriverError);
  return cause?.errno === ER_LOCK_DEADLOCK || cause?.errno === ER_LOCK_WAIT_TIMEOUT;
}

/** Sends one query on a mysql2 connection with the adapter's typeCast. */
export function sendQuery(connection: MysqlConnection, sql: string, values: readonly unknown[] = []): Promise<unknown> {
  return new Promise((resolve, reject) => {
    connection.query({ sql, typeCast: MYSQL_TYPE_CAST }, values, (error, result) => (error ? reject(mysqlFailure(error)) : resolve(result)));
  });
}

/**
 * Statements on one connection: one of the store's own sessions (`multiStatement`: several
 * statements travel in one query), or a caller's, one of the DataSource's, inside the transaction
 * it has open (the host's session may not allow several statements in one query).
 */
export class ConnectionExecutor implements MysqlExecutor {
  constructor(
    private readonly connection: MysqlConnection,
    private readonly multiStatement: boolean,
    private readonly listener?: MysqlStatementListener,
  ) {}

  async query<R>(sql: string, values: readonly unknown[] = []): Promise<R[]> {
    this.listener?.(sql);
    return (await sendQuery(this.connection, sql, values)) as R[];
  }

  async run(sql: string, values: readonly unknown[] = []): Promise<MysqlResultHeader> {
    this.listener?.(sql);
    return (await sendQuery(this.connection, sql, values)) as MysqlResultHeader;
  }

  async script(statements: readonly MysqlStatement[]): Promise<unknown[]> {
    const results: unknown[] = [];
    for (const group of this.multiStatement ? bySize(statements) : statements.map((s) => [s])) {
      if (group.length === 1) {
        results.push(await this.query(group[0]!.sql, group[0]!.values));
        continue;
      }
      const sql = group.map((s) => s.sql).join(';\n');
      this.listener?.(sql);
      results.push(...((await sendQuery(this.connection, sql, group.flatMap((s) => s.values ?? []))) as unknown[]));
    }
    return results;
  }
}

/**
 * The most one query carries, in characters of SQL and values: well under the server's
 * `max_allowed_packet` (16 MiB by default on MariaDB 10.11, 64 MiB on MySQL 8), which a query
 * must fit whole. Statements that would go past it travel in the next query.
 */
export const QUERY_BUDGET = 4 * 1024 * 1024;

/** Statements in order, grouped into queries of at most {@link QUERY_BUDGET} (a larger one alone). */
function bySize(statements: readonly MysqlStatement[]): MysqlStatement[][] {
  const groups: MysqlStatement[][] = [];
  let size = 0;
  for (const statement of statements) {
    const cost = sizeOf(statement);
    if (groups.length === 0 || size + cost > QUERY_BUDGET) {
      groups.push([statement]);
      size = cost;
    } else {
      groups.at(-1)!.push(statement);
      size += cost;
    }
  }
  return groups;
}

/** About what a statement adds to a query: its text and its values as they are written into it. */
export function sizeOf(statement: MysqlStatement): number {
  let size = statement.sql.length;
  for (const value of statement.values ?? []) size += valueSize(value);
  return size;
}

function valueSize(value: unknown): number {
  if (typeof value === 'string') return value.length * 2 + 2;
  if (Array.isArray(value)) return value.reduce((sum: number, v) => sum + valueSize(v) + 2, 0);
  return 24;
}
