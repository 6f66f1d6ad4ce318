import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { SqliteJobStore } from '../../lib/store/index.js';

function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [join(process.cwd(), 'dist/lib/cli/main.js'), ...args], { env: { ...process.env, DATABASE_URL: '' } }, (error, stdout, stderr) =>
      resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe('durable-scheduler dead-letter cancel-all', () => {
  let dir: string;
  let dataSource: DataSource;
  let store: SqliteJobStore;
  let conn: string[];
  const declined: string[] = [];
  const other: string[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'durable-scheduler-cancel-all-'));
    dataSource = await new DataSource({ type: 'better-sqlite3', database: join(dir, 'ops.db') }).initialize();
    store = new SqliteJobStore({ dataSource });
    await store.migrate();
    conn = ['--conn', `sqlite:${join(dir, 'ops.db')}`];
    for (const [name, error, into] of [
      ['billing.charge', 'Error: card declined', declined],
      ['billing.charge', 'Error: card declined', declined],
      ['billing.charge', 'Error: timeout', other],
    ] as const) {
      const { id } = await store.jobEnqueue({ job: { name, payload: {} } });
      const [job] = await store.jobClaim({ workerId: 'seed', limit: 1, queues: ['default'], leaseMs: 60_000 });
      expect(job?.id).toBe(id);
      await store.jobCompleteMany({ workerId: 'seed', outcomes: [{ jobId: id, attempt: 1, kind: 'dead_lettered', error }] });
      into.push(id);
    }
  });
  afterAll(async () => {
    await dataSource.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  it('refuses to run without a filter, in one sentence, and changes nothing', async () => {
    const run = await cli(['dead-letter', 'cancel-all', ...conn]);
    expect(run.code).not.toBe(0);
    expect(run.stderr).toBe('dead-letter cancel-all needs a filter: pass --name, --error or both, or cancel one job with cancel <id>.\n');
    expect((await store.jobListDeadLettered()).length).toBe(3);
  });

  it('--dry-run lists the matches and cancels nothing', async () => {
    const run = await cli(['dead-letter', 'cancel-all', ...conn, '--error', 'card declined', '--dry-run']);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    for (const id of declined) expect(run.stdout).toContain(id);
    for (const id of other) expect(run.stdout).not.toContain(id);
    expect(run.stdout).toContain('2 would be cancelled; run again without --dry-run to cancel them.');
    expect((await store.jobListDeadLettered()).length).toBe(3);
  });

  it('cancels exactly the matches, keeping their errors, each audited as the CLI user', async () => {
    const run = await cli(['dead-letter', 'cancel-all', ...conn, '--name', 'billing.charge', '--error', 'card declined']);
    expect(run).toMatchObject({ code: 0, stderr: '', stdout: 'Cancelled 2 of 2 matching dead letters: they keep their errors and history, and retention deletes them.\n' });
    for (const id of declined) expect(await store.jobGet({ jobId: id })).toMatchObject({ state: 'cancelled', lastError: 'Error: card declined' });
    for (const id of other) expect((await store.jobGet({ jobId: id }))!.state).toBe('dead_lettered');
    const audit = (await store.auditList()).filter((record) => record.action === 'job.cancel');
    expect(audit.map((record) => record.target).sort()).toEqual([...declined].sort());
    expect(audit.every((record) => /^cli:.+@.+$/.test(record.actor))).toBe(true);
    expect((await store.jobListDeadLettered()).map((job) => job.id)).toEqual(other);
  });
});
