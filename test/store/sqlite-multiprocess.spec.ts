import { afterAll, describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { SqliteJobStore } from '../../lib/store/index.js';

/** Starts a claimer process; resolves `ready` once it is open, and `done` with the ids it claimed. */
function startClaimer(database: string, workerId: string) {
  const child = spawn(process.execPath, [join(process.cwd(), 'test/support/sqlite-claimer.mjs'), database, workerId], { stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  const ready = new Promise<void>((resolve) =>
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
      if (stderr.includes('ready')) resolve();
    }),
  );
  const done = new Promise<string[]>((resolve, reject) =>
    child.on('close', (code) => (code === 0 ? resolve(JSON.parse(stdout) as string[]) : reject(new Error(`claimer ${workerId} exited ${code}: ${stderr}`)))),
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
    await store.jobEnqueueMany(Array.from({ length: total }, (_, i) => ({ name: 'mp', payload: { i } })));
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
});
