import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { SqliteJobStore } from '../../lib/store/index.js';

/** The binary piped into a reader that stops early (`| head -2`): it ends quietly, with no stack trace. */
describe('durable-scheduler into a pipe closed early', () => {
  let dir: string;
  let database: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'durable-scheduler-pipe-'));
    database = join(dir, 'ops.db');
    const dataSource = await new DataSource({ type: 'better-sqlite3', database }).initialize();
    const store = new SqliteJobStore({ dataSource });
    await store.migrate();
    await store.jobEnqueueMany({ jobs: Array.from({ length: 20 }, (_, i) => ({ name: 'report.build', payload: i })) });
    await store.close();
    await dataSource.destroy();
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('ends quietly when its reader has closed the pipe', async () => {
    const child = spawn(process.execPath, [join(process.cwd(), 'dist/lib/cli/main.js'), 'jobs', 'list', '--conn', `sqlite:${database}`, '--limit', '20'], {
      env: { ...process.env, DATABASE_URL: undefined } as NodeJS.ProcessEnv,
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    // The reader goes away before the command writes (it reads the store first), as `head` does
    // once it has its lines: every write the command makes then fails.
    child.stdout.destroy();
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
  });
});
