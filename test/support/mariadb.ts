import { randomBytes } from 'node:crypto';
import { DataSource, type QueryRunner } from 'typeorm';
import type { MysqlNaming } from '../../lib/store/mysql/mysql-naming.js';

/** The server the MariaDB suites use: MARIADB_URL, or the one on this machine and in CI. */
export function mariadbUrl(): string {
  return process.env.MARIADB_URL ?? 'mysql://root@127.0.0.1:3306/test';
}

/** A fresh table prefix, so suites and cases never see each other's tables. */
export function uniquePrefix(tag = 't'): string {
  return `${tag}_${process.pid}_${randomBytes(4).toString('hex')}_`;
}

/**
 * A DataSource on the suites' server. When no server answers, the suite fails with one sentence
 * that says how to get one; it never skips.
 */
export async function openMariadbDataSource(options: { readonly poolSize?: number; readonly charset?: string; readonly url?: string } = {}): Promise<DataSource> {
  const url = options.url ?? mariadbUrl();
  const dataSource = new DataSource({ type: 'mariadb', url, poolSize: options.poolSize ?? 8, ...(options.charset ? { charset: options.charset } : {}) });
  try {
    return await dataSource.initialize();
  } catch (error) {
    const code = (error as { code?: string }).code ?? (error as Error).message;
    throw new Error(
      `No MariaDB server answered at ${url.replace(/\/\/[^@/]*@/, '//…@')} (${code}): start one (Debian: apt-get install mariadb-server && service mariadb start), or point MARIADB_URL at one; the MariaDB suites never skip.`,
    );
  }
}

/** Drops every table of an installation (its prefix's), whatever migrations created. */
export async function dropInstallation(dataSource: DataSource, naming: Pick<MysqlNaming, 'prefix'>): Promise<void> {
  const rows = (await dataSource.query(
    `SELECT table_name AS name FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name LIKE CONCAT(REPLACE(?, '_', '\\\\_'), '%')`,
    [naming.prefix],
  )) as { name: string }[];
  if (rows.length > 0) await dataSource.query(`DROP TABLE IF EXISTS ${rows.map((r) => `\`${r.name}\``).join(', ')}`);
}

/**
 * Transactions a test holds open on sessions of its own and drives statement by statement, to put
 * a lock where an interleaving needs it. `release()`, in afterAll, rolls back and releases any
 * still open, so a failed case leaves no lock behind for the next.
 */
export function heldTransactions() {
  const runners: QueryRunner[] = [];
  return {
    async open(source: DataSource): Promise<QueryRunner> {
      const runner = source.createQueryRunner();
      runners.push(runner);
      await runner.connect();
      await runner.startTransaction();
      return runner;
    },
    async release(): Promise<void> {
      for (const runner of runners) {
        if (runner.isTransactionActive) await runner.rollbackTransaction().catch(() => undefined);
        if (!runner.isReleased) await runner.release();
      }
    },
  };
}
