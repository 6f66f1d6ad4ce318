import { afterAll, describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { SqliteJobStore } from '../../lib/store/index.js';

/** Starts a claimer process; resolves `ready` once it is open, and `done` with the ids it claimed. */
function startClaimer(database: string, workerId: string) {
  return startChild<string[]>('sqlite-claimer.mjs', [database, workerId]);
}

/** Starts a child from test/support; `ready` once it says so on stderr, `done` with its JSON stdout. */
function startChild<T>(script: string, args: string[]) {
  const workerId = args[1];
  const child = spawn(process.execPath, [join(process.cwd(), 'test/support', script), ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  const ready = new Promise<void>((resolve) =>
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
      if (stderr.includes('ready')) resolve();
    }),
  );
  const done = new Promise<T>((resolve, reject) =>
    child.on('close', (code) => (code === 0 ? resolve(JSON.parse(stdout) as T) : reject(new Error(`${script} ${workerId} exited ${code}: ${stderr}`)))),
  );
  return { ready, done, go: () => child.stdin.end('go\n') };
}
const dir = mkdtempSync(join(tmpdir(), 'durable-scheduler-mp-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('SQLite with several processes on one file', () => {
  it('gives each job to exactly one of three worker processes, and every outcome lands', async () => {
    const database = join(dir, 'shared.db');
    const dataSource = await new DataSource({ type: 'better-sqlite3', database }).initialize();
    const store = new SqliteJobStore({ dataSource });
    await store.migrate();
    const total = 1_500;
    await store.jobEnqueueMany({ jobs: Array.from({ length: total }, (_, i) => ({ name: 'mp', payload: { i } })) });
    await dataSource.destroy();

    const claimers = ['p1', 'p2', 'p3'].map((workerId) => startClaimer(database, workerId));
    await Promise.all(claimers.map((c) => c.ready));
    for (const c of claimers) c.go();
    const claims = await Promise.all(claimers.map((c) => c.done));
    const all = claims.flat();
    expect(all).toHaveLength(total);
    expect(new Set(all).size).toBe(total);

    const check = await new DataSource({ type: 'better-sqlite3', database }).initialize();
    const rows = await check.query(`SELECT state, count(*) AS n, max(attempt) AS attempts FROM durable_scheduler_jobs GROUP BY state`);
    expect(rows).toEqual([{ state: 'succeeded', n: total, attempts: 1 }]);
    await check.destroy();
  });

  it('issue 19 item 6: two processes enqueueing inside their own transactions and writing through attempt transactions on one file: nothing fails', async () => {
    const database = join(dir, 'contended.db');
    const dataSource = await new DataSource({ type: 'better-sqlite3', database }).initialize();
    await new SqliteJobStore({ dataSource }).migrate();
    for (const table of ['orders (ref TEXT NOT NULL)', 'ledger (ref TEXT NOT NULL)', 'producers_done (worker TEXT NOT NULL)']) {
      await dataSource.query(`CREATE TABLE ${table}`);
    }
    await dataSource.destroy();

    const perProcess = 300;
    const contenders = ['c1', 'c2'].map((workerId) =>
      startChild<{ enqueueErrors: string[]; logged: string[]; stats: { succeeded: number; failed: number } }>('sqlite-contender.mjs', [database, workerId, String(perProcess), '2']),
    );
    await Promise.all(contenders.map((c) => c.ready));
    for (const c of contenders) c.go();
    const reports = await Promise.all(contenders.map((c) => c.done));
    // Every enqueue inside a host transaction landed, and no attempt failed (nothing was logged).
    expect(reports.map((r) => r.enqueueErrors)).toEqual([[], []]);
    expect(reports.map((r) => r.logged)).toEqual([[], []]);
    expect(reports.reduce((sum, r) => sum + r.stats.succeeded, 0)).toBe(2 * perProcess);

    const check = await new DataSource({ type: 'better-sqlite3', database }).initialize();
    expect(await check.query(`SELECT state, count(*) AS n, max(attempt) AS attempts FROM durable_scheduler_jobs GROUP BY state`)).toEqual([
      { state: 'succeeded', n: 2 * perProcess, attempts: 1 },
    ]);
    expect(await check.query(`SELECT (SELECT count(*) FROM orders) AS orders, (SELECT count(DISTINCT ref) FROM ledger) AS ledger`)).toEqual([
      { orders: 2 * perProcess, ledger: 2 * perProcess },
    ]);
    await check.destroy();
  });
});
