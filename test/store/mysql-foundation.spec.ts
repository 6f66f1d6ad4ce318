import { describe, expect, it } from '@jest/globals';
import { InvalidIdentifierError, StoreBusyError, StoreUnavailableError } from '../../lib/core/index.js';
import { isLockFailure, mysqlFailure } from '../../lib/store/mysql/mysql-executor.js';
import { fromMysqlInstant, toMysqlInstant } from '../../lib/store/mysql/mysql-instant.js';
import { MAX_MYSQL_PREFIX_LENGTH, mysqlNaming } from '../../lib/store/mysql/mysql-naming.js';
import { assertServerSupported, parseServerVersion } from '../../lib/store/mysql/mysql-server-check.js';

// The MySQL store's pure parts; what needs a server runs in `npm run test:mariadb`.
describe('MySQL store: names, instants, servers and errors', () => {
  it('derives backtick-quoted, prefixed table names, qualified by the database when one is given', () => {
    expect(mysqlNaming().jobs).toBe('`durable_scheduler_jobs`');
    expect(mysqlNaming('app_', 'tenant_db').history).toBe('`tenant_db`.`app_job_history`');
    expect(mysqlNaming('').limits).toBe('`concurrency_limits`');
  });

  it('refuses a prefix or database that is not a lower-case identifier, or a prefix that would push a table name past 64', () => {
    for (const bad of ['Jobs_', 'a`b', 'x; DROP TABLE y', 'ä_']) expect(() => mysqlNaming(bad)).toThrow(InvalidIdentifierError);
    expect(() => mysqlNaming('ok_', 'Bad')).toThrow(InvalidIdentifierError);
    expect(() => mysqlNaming('p'.repeat(MAX_MYSQL_PREFIX_LENGTH))).not.toThrow();
    expect(() => mysqlNaming('p'.repeat(MAX_MYSQL_PREFIX_LENGTH + 1))).toThrow(/at most 46 characters.*refuses names past 64/);
  });

  it('writes instants as UTC text with milliseconds and reads them back to the same instant', () => {
    for (const ms of [0, 1_733_338_200_123, Date.UTC(9999, 11, 31, 23, 59, 59, 999), Date.UTC(1000, 0, 1)]) {
      expect(fromMysqlInstant(toMysqlInstant(ms)).getTime()).toBe(ms);
    }
    expect(toMysqlInstant(Date.UTC(2026, 11, 4, 19, 30, 0, 5))).toBe('2026-12-04 19:30:00.005');
    expect(fromMysqlInstant('2026-12-04 19:30:00.123456').toISOString()).toBe('2026-12-04T19:30:00.123Z');
    expect(fromMysqlInstant(null)).toBeNull();
    expect(() => fromMysqlInstant('yesterday')).toThrow(/Unreadable DATETIME/);
  });

  it('tells MariaDB from MySQL and refuses servers older than the first with SKIP LOCKED', () => {
    expect(parseServerVersion('10.11.19-MariaDB-0+deb12u1')).toEqual({ flavour: 'mariadb', version: [10, 11, 19], text: '10.11.19-MariaDB-0+deb12u1' });
    expect(parseServerVersion('8.0.36').flavour).toBe('mysql');
    for (const ok of ['10.6.0-MariaDB', '11.4.2-MariaDB', '8.0.1', '8.4.0', '9.1.0']) expect(() => assertServerSupported(parseServerVersion(ok))).not.toThrow();
    expect(() => assertServerSupported(parseServerVersion('10.5.23-MariaDB'))).toThrow(/MariaDB 10.5.23.*MariaDB 10.6.0 or later.*SKIP LOCKED/);
    expect(() => assertServerSupported(parseServerVersion('5.7.44'))).toThrow(/MySQL 5.7.44.*MySQL 8.0.1 or later/);
  });

  it('types lock failures and lost connections, and passes other statement errors on as they are', () => {
    const deadlock = Object.assign(new Error('Deadlock found'), { errno: 1213 });
    const lockWait = Object.assign(new Error('Lock wait timeout exceeded'), { errno: 1205 });
    expect(mysqlFailure(deadlock)).toBeInstanceOf(StoreBusyError);
    expect(mysqlFailure(lockWait)).toBeInstanceOf(StoreBusyError);
    expect(isLockFailure(mysqlFailure(deadlock))).toBe(true);
    expect(isLockFailure(deadlock)).toBe(true);
    for (const lost of [{ code: 'ECONNREFUSED' }, { code: 'PROTOCOL_CONNECTION_LOST', fatal: true }, { fatal: true }]) {
      expect(mysqlFailure(Object.assign(new Error('gone'), lost))).toBeInstanceOf(StoreUnavailableError);
    }
    expect(mysqlFailure(Object.assign(new Error("Table 'test.x_jobs' doesn't exist"), { errno: 1146 }))).toEqual(
      expect.objectContaining({ name: 'StoreUnavailableError', message: expect.stringMatching(/^The scheduler's tables do not exist.*run migrate\(\).*\.$/) }),
    );
    expect(mysqlFailure(Object.assign(new Error("Unknown database 'nowhere'"), { errno: 1049 }))).toBeInstanceOf(StoreUnavailableError);
    const duplicate = Object.assign(new Error('Duplicate entry'), { errno: 1062, code: 'ER_DUP_ENTRY' });
    expect(mysqlFailure(duplicate)).toBe(duplicate);
    expect(isLockFailure(duplicate)).toBe(false);
  });
});
