import { afterAll, beforeAll, expect } from '@jest/globals';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { SqliteJobStore } from '../../lib/store/index.js';

/** Runs the built CLI, without DATABASE_URL, and gives its exit code and output. */
export function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [join(process.cwd(), 'dist/lib/cli/main.js'), ...args], { env: { ...process.env, DATABASE_URL: '' } }, (error, stdout, stderr) =>
      resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** A SQLite file holding dead letters, and the `--conn` arguments that reach it. */
export interface DeadLetterFixture {
  readonly store: SqliteJobStore;
  readonly conn: string[];
  close(): Promise<void>;
}

/** Creates the file and dead-letters one job per `[name, error]`, in order; returns their ids too. */
export async function deadLetterFixture(prefix: string, letters: readonly (readonly [string, string])[]): Promise<DeadLetterFixture & { ids: string[] }> {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const dataSource = await new DataSource({ type: 'better-sqlite3', database: join(dir, 'ops.db') }).initialize();
  const store = new SqliteJobStore({ dataSource });
  await store.migrate();
  const ids: string[] = [];
  for (const [name, error] of letters) {
    const { id } = await store.jobEnqueue({ job: { name, payload: {} } });
    const [job] = await store.jobClaim({ workerId: 'seed', limit: 1, queues: ['default'], leaseMs: 60_000 });
    expect(job?.id).toBe(id);
    await store.jobCompleteMany({ workerId: 'seed', outcomes: [{ jobId: id, attempt: 1, kind: 'dead_lettered', error }] });
    ids.push(id);
  }
  return {
    store,
    ids,
    conn: ['--conn', `sqlite:${join(dir, 'ops.db')}`],
    async close() {
      await dataSource.destroy();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The fixture for one describe block: made before its tests, removed after them. */
export function useDeadLetters(prefix: string, letters: readonly (readonly [string, string])[]): { current: DeadLetterFixture & { ids: string[] } } {
  const holder = {} as { current: DeadLetterFixture & { ids: string[] } };
  beforeAll(async () => {
    holder.current = await deadLetterFixture(prefix, letters);
  });
  afterAll(async () => {
    await holder.current.close();
  });
  return holder;
}
