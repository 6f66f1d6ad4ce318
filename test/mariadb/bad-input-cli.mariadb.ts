import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import type { DataSource } from 'typeorm';
import { MysqlJobStore } from '../../lib/store/index.js';
import { cliBadInputCases } from '../bad-input/bad-input-cli.cases.js';
import { HOSTILE } from '../bad-input/hostile.js';
import { dropInstallation, mariadbUrl, openMariadbDataSource, uniquePrefix } from '../support/mariadb.js';

/** The machine's server through the mariadb:// scheme, which the other MariaDB CLI suite does not use. */
const CONN = mariadbUrl().replace(/^[a-z]+:/, 'mariadb:');

/** Every row of every table of the installation, in an order that does not depend on the server. */
async function installationRows(dataSource: DataSource, prefix: string): Promise<Record<string, string[]>> {
  const tables = (await dataSource.query(
    `SELECT table_name AS name FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name LIKE CONCAT(REPLACE(?, '_', '\\\\_'), '%') ORDER BY 1`,
    [prefix],
  )) as { name: string }[];
  const rows: Record<string, string[]> = {};
  for (const { name } of tables) rows[name] = ((await dataSource.query(`SELECT * FROM \`${name}\``)) as unknown[]).map((row) => JSON.stringify(row)).sort();
  return rows;
}

describe('the durable-scheduler CLI with bad input, on MariaDB', () => {
  cliBadInputCases(async () => {
    const prefix = uniquePrefix('badcli');
    const dataSource = await openMariadbDataSource({ poolSize: 3 });
    const store = new MysqlJobStore({ dataSource, tablePrefix: prefix, poolSize: 2 });
    await store.migrate();
    const hostile = Object.values(HOSTILE);
    return {
      kind: 'mysql',
      conn: CONN,
      table: `${prefix}jobs`,
      // MySQL's schemas are its databases: a fresh one is the same server, and "untouched" means no
      // database and no table anywhere is named after a hostile value.
      freshConn: CONN,
      freshUntouched: async () => {
        const [row] = (await dataSource.query(
          `SELECT (SELECT COUNT(*) FROM information_schema.schemata WHERE schema_name IN (?))
                + (SELECT COUNT(*) FROM information_schema.tables WHERE table_name IN (?)) AS n`,
          [hostile, hostile],
        )) as { n: string | number }[];
        const prefixed = await Promise.all(
          hostile.map(async (h) => (await dataSource.query(`SELECT COUNT(*) AS n FROM information_schema.tables WHERE table_name LIKE ?`, [`${h.replace(/[\\%_]/g, (c) => `\\${c}`)}%`])) as { n: string | number }[]),
        );
        return Number(row!.n) + prefixed.reduce((sum, [r]) => sum + Number(r!.n), 0) === 0;
      },
      store,
      snapshot: () => installationRows(dataSource, prefix),
      cleanup: async () => {
        await store.close();
        await dropInstallation(dataSource, { prefix });
        await dataSource.destroy();
      },
    };
  });
});

interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

function cli(args: readonly string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(process.execPath, [join(process.cwd(), 'dist/lib/cli/main.js'), ...args], { env: { ...process.env, DATABASE_URL: undefined } as NodeJS.ProcessEnv }, (error, stdout, stderr) =>
      resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe('the CLI refuses a bad MySQL URL or --table in one sentence, before connecting', () => {
  const prefix = uniquePrefix('badurl');
  let dataSource: DataSource;
  let store: MysqlJobStore;

  beforeAll(async () => {
    dataSource = await openMariadbDataSource({ poolSize: 2 });
    store = new MysqlJobStore({ dataSource, tablePrefix: prefix, poolSize: 2 });
    await store.migrate();
    await store.jobEnqueue({ job: { name: 'billing.charge', payload: { invoice: 1 } } });
  });

  afterAll(async () => {
    await store?.close();
    if (dataSource) {
      await dropInstallation(dataSource, { prefix });
      await dataSource.destroy();
    }
  });

  const secret = 'hunter2%secret';
  it.each([
    ['user name', 'mysql://ro%zzot@127.0.0.1:3306/test', /^The --conn value has a malformed percent-encoding in its user name; write a literal "%" as %25\.$/],
    ['password', `mariadb://root:${secret}@127.0.0.1:3306/test`, /^The --conn value has a malformed percent-encoding in its password; write a literal "%" as %25\.$/],
    ['database name', 'mysql://root@127.0.0.1:3306/te%E0st', /^The --conn value has a malformed percent-encoding in its database name; write a literal "%" as %25\.$/],
    ['query', 'mysql://root@127.0.0.1:3306/test?ssl=true', /^The --conn value has a query or fragment, which the CLI does not read on MySQL; pass mysql:\/\/user:password@host:port\/database alone\.$/],
    ['path of two names', 'mariadb://root@127.0.0.1:3306/test/extra', /^The --conn value's path must be one database name, as in mariadb:\/\/user@host\/database\.$/],
    ['missing database', 'mysql://root@127.0.0.1:3306', /^The --conn value names no database; add one \(mysql:\/\/user@host\/database\) or put it in --table \(database\.badurl_\w+_jobs\)\.$/],
    ['unparsable URL', 'mysql://root@127.0.0.1:99999/test', /^The --conn value is not a valid mysql:\/\/ URL\.$/],
  ])('a --conn with a bad %s', async (_label, conn, stderr) => {
    const before = await installationRows(dataSource, prefix);
    const run = await cli(['stats', '--conn', conn, '--table', `${prefix}jobs`]);
    expect(run).toMatchObject({ code: 1, stdout: '' });
    expect(run.stderr).toMatch(/^[^\n]+\.\n$/);
    expect(run.stderr.replace(/\n$/, '')).toMatch(stderr);
    expect(run.stderr).not.toContain('hunter2');
    expect(await installationRows(dataSource, prefix)).toEqual(before);
  });

  it.each([
    ['a prefix past MySQL\'s 46 characters', `${'p'.repeat(47)}jobs`, /^--table prefix must be at most 46 characters on MySQL, since the store adds table names of up to 18 characters and MySQL refuses names past 64, got 47 characters\.$/],
    ['three parts', 'a.b.jobs', /^--table must be "table" or "database\.table", got "a\.b\.jobs"\.$/],
    ['a database that is no identifier', "o'brien.jobs", /^--table database must be a lower-case SQL identifier/],
  ])('a --table with %s', async (_label, table, stderr) => {
    const run = await cli(['migrate', '--conn', mariadbUrl(), '--table', table]);
    expect(run).toMatchObject({ code: 1, stdout: '' });
    expect(run.stderr.replace(/\n$/, '')).toMatch(stderr);
  });
});
