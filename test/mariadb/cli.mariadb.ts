import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile, spawn } from 'node:child_process';
import { join } from 'node:path';
import type { DataSource } from 'typeorm';
import { MysqlJobStore } from '../../lib/store/index.js';
import { cliCases } from '../cli/cli.cases.js';
import { DashboardBrowser } from '../dashboard/dashboard-browser.js';
import { dropInstallation, mariadbUrl, openMariadbDataSource, uniquePrefix } from '../support/mariadb.js';

const CLI = join(process.cwd(), 'dist/lib/cli/main.js');

/** Every row of the tables, in an order that does not depend on how the server returns them. */
async function rowsOf(dataSource: DataSource, tables: readonly string[]): Promise<unknown> {
  const all: Record<string, string[]> = {};
  for (const table of tables) all[table] = ((await dataSource.query(`SELECT * FROM \`${table}\``)) as unknown[]).map((row) => JSON.stringify(row)).sort();
  return all;
}

/** The machine's server under another scheme, or with a password, a port or a database of its own. */
function urlLike(changes: { scheme?: string; password?: string; port?: string; database?: string }): string {
  const url = new URL(mariadbUrl());
  if (changes.password !== undefined) url.password = changes.password;
  if (changes.port !== undefined) url.port = changes.port;
  if (changes.database !== undefined) url.pathname = `/${changes.database}`;
  const text = url.toString();
  return changes.scheme === undefined ? text : text.replace(/^[a-z]+:/, `${changes.scheme}:`);
}

/** The database the server URL names. */
const DATABASE = new URL(mariadbUrl()).pathname.slice(1);

describe('the durable-scheduler CLI on MariaDB', () => {
  cliCases(async () => {
    const prefix = uniquePrefix('cli');
    const dataSource = await openMariadbDataSource({ poolSize: 3 });
    const store = new MysqlJobStore({ dataSource, tablePrefix: prefix, poolSize: 2 });
    await store.migrate();
    const leanStore = new MysqlJobStore({ dataSource, tablePrefix: prefix, poolSize: 2, finish: 'lean' });
    const tables = ['jobs', 'queues', 'schedules', 'audit_log'].map((t) => prefix + t);
    return {
      conn: mariadbUrl(),
      // Qualified, so the [database.] form of --table is what the shared cases run on.
      table: `${DATABASE}.${prefix}jobs`,
      store,
      leanStore,
      snapshot: () => rowsOf(dataSource, tables),
      cleanup: async () => {
        await store.close();
        await leanStore.close();
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

function cli(args: readonly string[], env: Record<string, string | undefined> = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { env: { ...process.env, DATABASE_URL: undefined, ...env } as NodeJS.ProcessEnv }, (error, stdout, stderr) =>
      resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe('the CLI on MySQL URLs: schemes, databases and connection failures', () => {
  const prefix = uniquePrefix('clim');
  let dataSource: DataSource;
  let store: MysqlJobStore;

  beforeAll(async () => {
    dataSource = await openMariadbDataSource({ poolSize: 2 });
    store = new MysqlJobStore({ dataSource, tablePrefix: prefix, poolSize: 2 });
  });

  afterAll(async () => {
    await store?.close();
    if (dataSource) {
      await dropInstallation(dataSource, { prefix });
      await dataSource.destroy();
    }
  });

  it('migrate creates the tables through mariadb://, and mysql:// and DATABASE_URL read the same ones', async () => {
    const migrated = await cli(['migrate', '--conn', urlLike({ scheme: 'mariadb' }), '--table', `${prefix}jobs`]);
    expect(migrated).toMatchObject({ code: 0, stderr: '' });
    expect(migrated.stdout).toMatch(/^Migrated mariadb:\/\/\S+ from schema version 0 to \d+\.\n$/);
    const { id } = await store.jobEnqueue({ job: { name: 'mail.send', payload: {}, delayMs: 60_000 } });
    for (const run of [
      await cli(['jobs', 'list', '--conn', urlLike({ scheme: 'mysql' }), '--table', `${DATABASE}.${prefix}jobs`, '--format', 'json']),
      await cli(['jobs', 'list', '--table', `${prefix}jobs`, '--format', 'json'], { DATABASE_URL: urlLike({ scheme: 'mariadb' }) }),
    ]) {
      expect(run).toMatchObject({ code: 0, stderr: '' });
      expect(JSON.parse(run.stdout).jobs.map((job: { id: string }) => job.id)).toEqual([id]);
    }
  });

  it('names an unreachable server or refused credentials in one sentence, never showing the password', async () => {
    const refused = await cli(['stats', '--conn', 'mysql://root:hunter2-secret@127.0.0.1:1/nowhere']);
    expect(refused).toEqual({ code: 1, stdout: '', stderr: 'Could not connect to mysql://127.0.0.1:1/nowhere (ECONNREFUSED).\n' });
    const denied = await cli(['stats', '--conn', urlLike({ scheme: 'mariadb', password: 'hunter2-secret' }), '--verbose']);
    expect(denied.code).toBe(1);
    expect(denied.stderr).toMatch(/^Could not connect to mariadb:\/\/[^@\s]+ \(ER_ACCESS_DENIED_ERROR\)\.\n/);
    expect(denied.stderr).not.toContain('hunter2');
  });

  it('names a missing database, in the URL or in --table, and missing tables', async () => {
    const url = await cli(['stats', '--conn', urlLike({ database: 'no_such_database' })]);
    expect(url).toEqual({ code: 1, stdout: '', stderr: expect.stringMatching(/^Could not connect to mysql:\/\/\S+\/no_such_database \(ER_BAD_DB_ERROR\)\.\n$/) });
    for (const command of ['stats', 'migrate']) {
      const table = await cli([command, '--conn', mariadbUrl(), '--table', `no_such_database.${prefix}jobs`]);
      expect(table).toEqual({
        code: 1,
        stdout: '',
        stderr: expect.stringMatching(/^No database named no_such_database exists at mysql:\/\/\S+; check --table, or create it first \(CREATE DATABASE no_such_database\)\.\n$/),
      });
    }
    const never = uniquePrefix('never');
    const tables = await cli(['stats', '--conn', mariadbUrl(), '--table', `${never}jobs`]);
    expect(tables.stderr).toBe(`No scheduler tables named ${DATABASE}.${never}jobs exist at ${mariadbUrl().replace(/\/\/[^@/]*@/, '//')}; check --table, or run "durable-scheduler migrate" first.\n`);
    // Without --table, the tables are the default prefix's in the URL's database.
    const none = await cli(['stats', '--conn', urlLike({ database: '' }).replace(/\/$/, '')]);
    expect(none.stderr).toBe('The --conn value names no database; add one (mysql://user@host/database) or put it in --table (database.durable_scheduler_jobs).\n');
  });

  it('serves the standalone dashboard on the same connection, and stops on SIGTERM', async () => {
    const { id } = await store.jobEnqueue({ job: { name: 'mail.send', payload: {}, queue: 'mail', delayMs: 60_000 } });
    const child = spawn(process.execPath, [CLI, 'dashboard', '--port', '0', '--conn', urlLike({ scheme: 'mariadb' }), '--table', `${prefix}jobs`], { env: { ...process.env, DATABASE_URL: '' } });
    let stdout = '';
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      const base = await new Promise<string>((resolve, reject) => {
        child.stdout.on('data', (chunk) => {
          stdout += chunk;
          const match = /at (http:\/\/\S+) for mariadb:\/\//.exec(stdout);
          if (match) resolve(match[1]!);
        });
        void exited.then((code) => reject(new Error(`the dashboard exited with ${code}: ${stderr}`)));
      });
      const browser = new DashboardBrowser(base);
      expect((await browser.get('/jobs')).text).toContain(`/jobs/${id}`);
      expect((await browser.post(`/jobs/${id}/cancel`)).status).toBe(303);
      expect((await store.jobGet({ jobId: id }))!.state).toBe('cancelled');
      expect((await store.auditList({ limit: 1 }))[0]).toMatchObject({ action: 'job.cancel', actor: expect.stringMatching(/^dashboard:.+@.+/) });
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });
});
