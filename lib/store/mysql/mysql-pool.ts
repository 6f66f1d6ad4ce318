import type { DataSource } from 'typeorm';
import { InvalidArgumentError } from '../../core/index.js';
import type { MysqlConnection, MysqlModule, MysqlPool } from './mysql-driver-types.js';

/**
 * The sql_mode of the store's sessions. STRICT_ALL_TABLES turns every truncation or bad value into
 * an error instead of a warning, so nothing is stored other than what was written;
 * NO_ENGINE_SUBSTITUTION refuses a table on any engine but InnoDB (the only one with row locks and
 * SKIP LOCKED). The store validates its input before writing, so this is the second line.
 */
export const MYSQL_STORE_SQL_MODE = 'STRICT_ALL_TABLES,NO_ENGINE_SUBSTITUTION,ERROR_FOR_DIVISION_BY_ZERO';

/**
 * What every store session runs once, when the pool opens it: READ COMMITTED, because at MySQL's
 * default REPEATABLE READ a locking read locks the gaps between index entries too, and claimers
 * that skip each other's rows then deadlock on the gaps (measured: 1,554 deadlocks in 40,000 claims
 * on MariaDB 10.11); UTC for the session, so any instant the server prints is UTC; and the strict
 * sql_mode above.
 */
const SESSION_SETUP = [
  'SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED',
  `SET SESSION sql_mode = '${MYSQL_STORE_SQL_MODE}', time_zone = '+00:00'`,
];

interface TypeormMysqlDriver {
  readonly mysql?: MysqlModule;
  readonly options: { readonly type: string; readonly replication?: { readonly master: object } };
  createConnectionOptions(options: object, credentials: object): unknown;
}

/**
 * Opens the store's own pool of `size` sessions to the DataSource's server (its primary, under
 * replication), with the DataSource's credentials, TLS and `extra` options. The store keeps its
 * own sessions so that their settings (above) never leak into the application's sessions, nor the
 * application's into the store's; the host's connections carry only the host's own transactions
 * (an enqueue in a host transaction, an attempt's EntityManager).
 */
export async function openStorePool(dataSource: DataSource, size: number): Promise<MysqlPool> {
  const driver = dataSource.driver as unknown as TypeormMysqlDriver | undefined;
  if (!driver?.mysql || typeof driver.createConnectionOptions !== 'function') {
    throw new InvalidArgumentError(
      `The MySQL store needs a DataSource of type "mysql" or "mariadb" whose driver is mysql2 (npm install mysql2), got type ${JSON.stringify(dataSource.options?.type)}.`,
      'dataSource',
    );
  }
  const credentials = driver.options.replication?.master ?? driver.options;
  const base = (await driver.createConnectionOptions(driver.options, credentials)) as Record<string, unknown>;
  const pool = driver.mysql.createPool({
    ...base,
    connectionLimit: size,
    // Several statements in one round trip: the adapter sends a write's follow-on statements
    // (history, counts, COMMIT) together. Every value still travels as an escaped parameter.
    multipleStatements: true,
    charset: 'UTF8MB4_BIN',
    timezone: 'Z',
    dateStrings: true,
    supportBigNumbers: true,
    bigNumberStrings: true,
    // A pooled session lost to a restart or a KILL is replaced rather than handed out dead.
    enableKeepAlive: true,
  });
  pool.on('connection', (connection) => setUpSession(connection));
  return pool;
}

/**
 * Runs the session setup on a new connection. The statements queue ahead of anything the pool
 * hands the connection out for, so no store statement runs before them; if one fails, the
 * connection is destroyed and the statement queued behind it fails with the same error.
 */
function setUpSession(connection: MysqlConnection): void {
  for (const sql of SESSION_SETUP) {
    connection.query({ sql }, [], (error) => {
      if (error) connection.destroy();
    });
  }
}
