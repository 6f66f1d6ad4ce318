import { afterAll, describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { SqliteJobStore } from '../../lib/store/index.js';

const KEYS = 30;
const ROUNDS = 3;

/** Starts an enqueuer process; resolves `ready` once it is open, and `done` with the ids it was answered per key. */
function startEnqueuer(database: string, label: string) {
  const script = join(process.cwd(), 'test/support/sqlite-unique-enqueuer.mjs');
  const child = spawn(process.execPath, [script, database, label, String(KEYS), String(ROUNDS)], { stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  const ready = new Promise<void>((resolve) =>
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
      if (stderr.includes('ready')) resolve();
    }),
  );
  const done = new Promise<Record<string, string[]>>((resolve, reject) =>
    child.on('close', (code) => (code === 0 ? resolve(JSON.parse(stdout) as Record<string, string[]>) : reject(new Error(`enqueuer ${label} exited ${code}: ${stderr}`)))),
  );
  return { ready, done, go: () => child.stdin.end('go\n') };
}
const dir = mkdtempSync(join(tmpdir(), 'durable-scheduler-mp-unique-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('issue 19 item 9: unique keys with several processes on one SQLite file', () => {
  it('three processes enqueueing the same keys at once make one job per key, and every process is answered with it', async () => {
    const database = join(dir, 'shared.db');
    const dataSource = await new DataSource({ type: 'better-sqlite3', database }).initialize();
    await new SqliteJobStore({ dataSource }).migrate();
    await dataSource.destroy();

    const enqueuers = ['p1', 'p2', 'p3'].map((label) => startEnqueuer(database, label));
    await Promise.all(enqueuers.map((e) => e.ready));
    for (const e of enqueuers) e.go();
    const answers = await Promise.all(enqueuers.map((e) => e.done));

    const check = await new DataSource({ type: 'better-sqlite3', database }).initialize();
    const rows: { id: string; unique_key: string }[] = await check.query(`SELECT id, unique_key FROM durable_scheduler_jobs ORDER BY unique_key`);
    await check.destroy();
    expect(rows).toHaveLength(KEYS);
    const stored = new Map(rows.map((row) => [row.unique_key, row.id]));
    for (let k = 0; k < KEYS; k++) {
      const ids = new Set(answers.flatMap((answer) => answer[`key-${k}`] ?? []));
      expect({ key: `key-${k}`, ids: [...ids] }).toEqual({ key: `key-${k}`, ids: [stored.get(`key-${k}`)] });
    }
    expect(answers.flatMap((answer) => Object.values(answer).flat())).toHaveLength(3 * KEYS * ROUNDS);
  });
});
